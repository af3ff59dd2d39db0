// The seat page as its player's microphone: "Hold to talk", or hands-free.
// The phone's sound goes to the referee over a WebSocket keyed like the page
// (/seat/NAME/listen?key=K), as 16 kHz 16-bit mono; the referee hears it as
// this player's, and what it made of it comes back as captions. Browsers give
// a microphone only to a secure page (https, or this machine's own address).
"use strict";

(() => {
  const config = JSON.parse(document.body.dataset.config);
  const $ = (id) => document.getElementById(id);
  const talk = $("talk");
  const handsFree = $("hands-free");
  const status = $("mic-status");
  let socket = null;
  let capture = null;   // {context, node, stream}
  let sending = false;  // sound goes to the referee now

  function tell(message, buzz) {
    status.textContent = message;
    if (buzz && navigator.vibrate) navigator.vibrate(buzz);
  }

  if (!window.isSecureContext || !navigator.mediaDevices || !window.AudioWorkletNode) {
    talk.disabled = true;
    handsFree.disabled = true;
    tell("The microphone is off: phones let only a secure page listen. Open the " +
         "https address the referee printed (start it with --tls), or type and tap below.");
    return;
  }

  async function open() {
    if (capture) return capture;
    // The sound as the microphone heard it: the referee takes its own voice
    // out (it knows what it played; the phone does not), and the phone's
    // own echo cancelling, noise suppression and gain would change that
    // voice as it goes, which its echo canceller could not follow.
    const stream = await navigator.mediaDevices.getUserMedia({
      audio: {channelCount: 1, echoCancellation: false, noiseSuppression: false,
              autoGainControl: false}});
    const context = new AudioContext();
    await context.audioWorklet.addModule("/static/capture.js");
    const node = new AudioWorkletNode(context, "capture");
    context.createMediaStreamSource(stream).connect(node);
    node.port.onmessage = (m) => {
      if (sending && socket && socket.readyState === WebSocket.OPEN) socket.send(m.data);
    };
    capture = {context, node, stream};
    return capture;
  }

  function connect() {
    if (socket && socket.readyState <= WebSocket.OPEN) return socket;
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const path = `/seat/${encodeURIComponent(config.seat)}/listen?key=${encodeURIComponent(config.key)}`;
    socket = new WebSocket(scheme + "//" + location.host + path);
    socket.binaryType = "arraybuffer";
    socket.onclose = (e) => {
      sending = false;
      talk.setAttribute("aria-pressed", "false");
      if (handsFree.checked) {
        handsFree.checked = false;
        tell(e.reason || "The referee stopped listening to this phone. Tap hands-free to " +
             "start again.", 200);
      } else if (e.reason) {
        tell(e.reason, 200);
      }
    };
    return socket;
  }

  async function start(how) {
    clearTimeout(waiting);
    waiting = null;
    answer = null;
    try {
      await open();
      await capture.context.resume();
      connect();
      sending = true;
      talk.setAttribute("aria-pressed", "true");
      tell(how, 50);
    } catch (error) {
      sending = false;
      handsFree.checked = false;
      tell(`The microphone could not start (${error.name || error}). Allow the ` +
           "microphone for this page, or type and tap below.", 200);
    }
  }

  function stop(message) {
    if (!sending) return;
    sending = false;
    talk.setAttribute("aria-pressed", "false");
    if (socket && socket.readyState === WebSocket.OPEN) socket.send("end");
    tell(message, 30);
  }

  // The line follows the referee: what it heard of this seat, and what
  // became of it (even while the button is still held: it decides at the
  // end of the words); after "Sent", when nothing comes back, that it did not
  // take it. Then it says the button is ready again.
  const AGAIN = "Hold the button to talk.";
  const WAIT_MS = 8000;
  let waiting = null;  // the timer while the referee has not answered a hold
  let answer = null;   // what became of this seat's words since the button went down
  function ready() {
    return handsFree.checked ? "Hands-free: still listening."
      : sending ? "Still listening: let go when you are done." : AGAIN;
  }
  document.addEventListener("heard", (e) => {
    const {who, text, outcome} = e.detail;
    if (who === null && waiting === null && !sending && !handsFree.checked) return;
    if (who !== null && who !== config.seat) return;
    if (outcome === null) { tell(`Heard: ${text}.`); return; }
    answer = who === null ? outcome : `Heard: ${text}: ${outcome}.`;
    clearTimeout(waiting);
    waiting = null;
    tell(`${answer} ${ready()}`);
  });
  function sent() {
    if (answer !== null) { stop(`${answer} ${AGAIN}`); return; }
    stop("Sent. Waiting for the referee.");
    clearTimeout(waiting);
    waiting = setTimeout(() => {
      waiting = null;
      tell("Nothing came back: the referee did not take that as something said to it. " +
           AGAIN);
    }, WAIT_MS);
  }

  // Hold to talk: press and hold (touch, mouse, or Space and Enter held on the button).
  const down = (e) => { e.preventDefault(); if (!handsFree.checked) start("Listening: speak now."); };
  const up = (e) => { e.preventDefault(); if (!handsFree.checked && sending) sent(); };
  talk.addEventListener("pointerdown", down);
  talk.addEventListener("pointerup", up);
  talk.addEventListener("pointercancel", up);
  talk.addEventListener("pointerleave", (e) => { if (sending && !handsFree.checked) up(e); });
  talk.addEventListener("keydown", (e) => { if ((e.key === " " || e.key === "Enter") && !e.repeat) down(e); });
  talk.addEventListener("keyup", (e) => { if (e.key === " " || e.key === "Enter") up(e); });
  talk.addEventListener("contextmenu", (e) => e.preventDefault());

  handsFree.addEventListener("change", () => {
    if (handsFree.checked) start("Hands-free: listening all the time. Speak when you like.");
    else stop("Hands-free is off. Hold the button to talk.");
  });
})();
