// The seat page's microphone, in the audio thread: the phone's sound, at the
// page's own rate (often 48 kHz), low-passed and resampled to 16 kHz mono and
// sent to the page 40 ms at a time as 16-bit little-endian samples.
//
// The low-pass comes first: a windowed-sinc filter (Blackman window) whose
// half-gain point is CUTOFF and that lets nothing from 8.1 kHz up through, so
// hiss, clatter and sibilants above 8 kHz do not fold into the band (plain
// averaging of three samples is only 6 dB down at 10 kHz). Any input rate
// works: each output sample is the filter centred on its own time, its taps
// taken from a table of PHASES fractional positions.
"use strict";

const OUT_RATE = 16000;
const CUTOFF = 7800;    // Hz: half gain; the stopband begins by 8.1 kHz
const TAPS_48K = 480;   // the filter's length at 48 kHz (10 ms)
const PHASES = 256;     // fractional positions of an output sample between two inputs

function filterTable(rate) {
  let taps = Math.ceil(TAPS_48K * rate / 48000);
  taps += taps % 2;   // (even: as many taps before an output's time as after)
  const half = taps / 2;
  const fc = CUTOFF / rate;
  const table = new Float32Array(PHASES * taps);
  for (let p = 0; p < PHASES; p++) {
    let sum = 0;
    for (let j = 0; j < taps; j++) {
      const x = j - half + 1 - p / PHASES;  // input sample j's distance from the output's time
      const sinc = x === 0 ? 2 * fc : Math.sin(2 * Math.PI * fc * x) / (Math.PI * x);
      const w = 0.42 + 0.5 * Math.cos(Math.PI * x / half) + 0.08 * Math.cos(2 * Math.PI * x / half);
      const h = Math.abs(x) >= half ? 0 : sinc * w;
      table[p * taps + j] = h;
      sum += h;
    }
    for (let j = 0; j < taps; j++) table[p * taps + j] /= sum;  // (unit gain at 0 Hz)
  }
  return { taps, half, table };
}

class Capture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / OUT_RATE;  // input samples per output sample
    const { taps, half, table } = filterTable(sampleRate);
    this.taps = taps;
    this.half = half;
    this.table = table;
    // Recent input; buf[i] is input sample start + i. It begins with a
    // filter's length of silence, so the first outputs have their history.
    this.buf = new Float32Array(taps * 2 + 512);
    this.have = taps;
    this.start = -taps;
    this.t = 0;  // the next output sample's time, in input samples
    this.out = new Int16Array(640);
    this.filled = 0;
  }

  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (!channel) return true;
    for (let i = 0; i < channel.length; i++) {
      if (this.have === this.buf.length) this.shift();
      this.buf[this.have++] = channel[i];
      this.emit();
    }
    return true;
  }

  // Each output sample whose last input has arrived.
  emit() {
    for (;;) {
      const q = Math.round(this.t * PHASES);
      const at = Math.floor(q / PHASES);  // the input sample at or before its time
      const first = at - this.half + 1 - this.start;
      if (first + this.taps > this.have) return;
      const row = (q - at * PHASES) * this.taps;
      let v = 0;
      for (let j = 0; j < this.taps; j++) v += this.buf[first + j] * this.table[row + j];
      v = Math.max(-1, Math.min(1, v));
      this.out[this.filled++] = v < 0 ? v * 32768 : v * 32767;
      if (this.filled === this.out.length) {
        this.port.postMessage(this.out.buffer.slice(0));
        this.filled = 0;
      }
      this.t += this.step;
    }
  }

  // Forget the input no output needs any more.
  shift() {
    const keep = Math.max(0, Math.floor(this.t) - this.half - this.start);
    this.buf.copyWithin(0, keep, this.have);
    this.have -= keep;
    this.start += keep;
  }
}

registerProcessor("capture", Capture);
