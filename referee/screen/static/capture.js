// The seat page's microphone, in the audio thread: the phone's sound, at the
// page's own rate (often 48 kHz), averaged down to 16 kHz mono and sent to the
// page 40 ms at a time as 16-bit little-endian samples.
"use strict";

class Capture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / 16000; // input samples per output sample
    this.phase = 0;                 // input samples into the current output sample
    this.sum = 0;
    this.count = 0;
    this.out = new Int16Array(640);
    this.filled = 0;
  }

  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (!channel) return true;
    for (let i = 0; i < channel.length; i++) {
      this.sum += channel[i];
      this.count += 1;
      this.phase += 1;
      if (this.phase >= this.step) {
        this.phase -= this.step;
        const v = Math.max(-1, Math.min(1, this.sum / this.count));
        this.out[this.filled++] = v < 0 ? v * 32768 : v * 32767;
        this.sum = 0;
        this.count = 0;
        if (this.filled === this.out.length) {
          this.port.postMessage(this.out.buffer.slice(0));
          this.filled = 0;
        }
      }
    }
    return true;
  }
}

registerProcessor("capture", Capture);
