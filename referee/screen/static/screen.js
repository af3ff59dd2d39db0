// The table's screen and the seat pages: events from the referee (server-sent
// events), the board drawn from its public state, the clock ticking between
// updates, every sentence as a caption. No build step, nothing fetched from
// elsewhere.
"use strict";

const config = JSON.parse(document.body.dataset.config);
const $ = (id) => document.getElementById(id);
let clock = null; // {left: seconds at `since`, since: performance.now()}

function text(tag, content, cls) {
  const node = document.createElement(tag);
  node.textContent = content;
  if (cls) node.className = cls;
  return node;
}

function caption(list, event) {
  const item = text("li", event.text, event.tone);
  item.dataset.at = event.at;
  list.append(item);
  while (list.children.length > 500) list.firstChild.remove();
  list.parentElement.scrollTop = list.parentElement.scrollHeight;  // (the log scrolls)
}

// A list of numbers as tiles; with `down`, every tile from 1 to the largest,
// those listed drawn face down.
function tiles(numbers, down) {
  const list = document.createElement("ul");
  list.className = "tiles";
  const shown = down ? Array.from({length: Math.max(12, ...numbers)}, (_, i) => i + 1) : numbers;
  for (const n of shown) {
    const tile = text("li", String(n));
    if (down && numbers.includes(n)) {
      tile.className = "down";
      tile.setAttribute("aria-label", `${n} down`);
    }
    list.append(tile);
  }
  return list;
}

function value(key, v) {
  if (Array.isArray(v) && v.every((x) => typeof x === "number")) return tiles(v, key === "down");
  if (Array.isArray(v)) return text("span", v.join(", "));
  if (v === null || v === undefined) return text("span", "–");
  if (typeof v === "boolean") return text("span", v ? "yes" : "no");
  if (typeof v === "object") return text("span", JSON.stringify(v));
  return text("span", String(v));
}

// Column titles for the state's keys that need more than a capital.
const TITLES = {down: "Tiles (dim: face down)", open: "Open tiles", cards: "Cards this round",
                rounds: "Round scores", modifiers: "Bonus cards", laid: "Phase down",
                groups: "Groups laid", made: "Made the phase", life_saver: "Life Saver"};
// The game's other facts, in words ("hands 1" is "Hands played: 1").
const FACTS = {hands: "Hands played", rounds: "Rounds played", round: "Round", roll: "Roll",
               target: "Target", flips_left: "Flips left this turn",
               flipped: "Flipped this turn", to_report: "Still to say if they made their phase"};
// Facts the page shows elsewhere: the winner in the heading, the board as its spaces.
const SHOWN_ELSEWHERE = new Set(["players", "turn", "winner", "board"]);
const words = (key) => FACTS[key] || (key[0].toUpperCase() + key.slice(1)).replaceAll("_", " ");

function board(state) {
  const game = state.game || {};
  const root = $("board");
  root.replaceChildren();
  const players = game.players || {};
  const names = Object.keys(players);
  if (names.length) {
    const fields = [...new Set(names.flatMap((n) => Object.keys(players[n] || {})))];
    const table = document.createElement("table");
    const head = table.createTHead().insertRow();
    head.append(text("th", "Player"));
    for (const f of fields) {
        const title = text("th", TITLES[f] || words(f));
      title.dataset.key = f;
      head.append(title);
    }
    const body = table.createTBody();
    for (const name of names) {
      const row = body.insertRow();
      row.dataset.player = name;
      if (name === state.turn) row.className = "now";
      const who = text("th", name === state.turn ? `${name} (to play)` : name);
      who.scope = "row";
      row.append(who);
      for (const f of fields) {
        const cell = row.insertCell();
        cell.dataset.label = TITLES[f] || words(f);  // (a phone shows it before the value)
        cell.append(value(f, (players[name] || {})[f]));
      }
    }
    root.append(table);
  }
  const spaces = typeof game.board === "string" && names.some((n) => "space" in (players[n] || {}));
  if (spaces) root.append(track(game.board.split(/\s+/), players));
  const rest = Object.entries(game).filter(([k, v]) => !SHOWN_ELSEWHERE.has(k)
    && v !== null && !(Array.isArray(v) && v.length === 0));
  if (typeof game.board === "string" && !spaces) rest.push(["board", game.board]);
  if (rest.length) {
    const list = document.createElement("dl");
    for (const [k, v] of rest) {
      list.append(text("dt", words(k)));
      const dd = document.createElement("dd");
      dd.append(value(k, v));
      list.append(dd);
    }
    root.append(list);
  }
}

// A board of spaces (Phase 10 Twist's: "1 2 T 3 10") with each player's pawn
// on their space (counted from 1), and those past the last space at the end.
function track(spaces, players) {
  const list = document.createElement("ol");
  list.className = "track";
  list.setAttribute("aria-label", "The board's spaces and the pawns on them");
  const here = (i) => Object.keys(players).filter((p) => players[p].space === i + 1
    && !players[p].finished);
  spaces.forEach((label, i) => {
    const space = text("li", label === "T" ? "Twist" : `Phase ${label}`);
    const pawns = here(i);
    if (pawns.length) space.append(text("span", pawns.join(", "), "pawns"));
    list.append(space);
  });
  const done = Object.keys(players).filter((p) => players[p].finished);
  const end = text("li", "Finished");
  if (done.length) end.append(text("span", done.join(", "), "pawns"));
  list.append(end);
  return list;
}

function state(event) {
  const s = event.state;
  const winner = s.game && s.game.winner;
  $("turn").textContent = s.over
    ? (winner && winner.length ? `Game over: ${[].concat(winner).join(" and ")} won` : "Game over")
    : s.paused ? "Paused" : s.turn ? `${s.turn} to play` : "";
  const question = $("question");
  question.hidden = !s.question;
  question.textContent = s.question || "";
  // "left": the seconds left as the server sent it (a page opened mid-turn).
  clock = typeof event.left !== "number"
    ? null : {left: event.left, since: performance.now()};
  tick();
  board(s);
  if (config.seat) {
    moves((s.moves || {})[config.seat] || []);
    answers(s);
  }
}

// The seat's answers and requests for the moment: yes and no while a question
// is open, play again and that's all once the game is over, undo while it runs.
function answers(s) {
  const now = {question: Boolean(s.question), over: Boolean(s.over) && !s.question,
               playing: !s.over};
  for (const button of document.querySelectorAll("#answers [data-when]")) {
    button.hidden = !now[button.dataset.when];
  }
}

// The moves this seat's player could make now, one button each.
function moves(sentences) {
  const root = $("moves");
  root.replaceChildren(...sentences.map((line) => {
    const button = text("button", line);
    button.type = "button";
    button.addEventListener("click", () => say(line, true));
    return button;
  }));
}

function tick() {
  const node = $("clock");
  if (!clock) { node.textContent = ""; delete node.dataset.left; return; }
  const left = Math.max(0, clock.left - (performance.now() - clock.since) / 1000);
  node.textContent = `${Math.ceil(left)} s`;
  node.dataset.left = left.toFixed(2);
}
setInterval(tick, 200);

const source = new EventSource(config.seat
  ? `/seat/${encodeURIComponent(config.seat)}/events?key=${encodeURIComponent(config.key)}`
  : "/events");
// What became of the last thing heard, told by the referee's next sentence.
// Each step is told to the rest of the page too (a "heard" event on the
// document: the seat's microphone line says what became of its words).
const OUTCOME = {announce: "played", turn: "played", answer: "answered",
                 question: "asked first", problem: "not played"};
let heard = null;
function told(detail) {
  document.dispatchEvent(new CustomEvent("heard", {detail}));
}
source.addEventListener("say", (m) => {
  const event = JSON.parse(m.data);
  if (event.to && $("for-you")) $("for-you").hidden = false;  // (hidden while empty)
  caption(event.to ? $("private") : $("captions"), event);
  if (heard && !event.to && OUTCOME[event.tone]) {
    if ($("heard")) $("heard").textContent = `${heard.who}: ${heard.text}: ${OUTCOME[event.tone]}`;
    told({...heard, outcome: OUTCOME[event.tone]});
    heard = null;
  } else if (!event.to && event.tone === "problem") {
    told({who: null, text: null, outcome: event.text});  // ("Sorry, I was talking")
  }
});
source.addEventListener("heard", (m) => {
  heard = JSON.parse(m.data);
  if ($("heard")) $("heard").textContent = `${heard.who}: ${heard.text}`;
  told({...heard, outcome: null});
});
source.addEventListener("state", (m) => state(JSON.parse(m.data)));

// `tap`: a button (the referee asks before a tapped move that ends a turn or
// the game); otherwise a line typed in the box, taken as typed.
async function say(line, tap = false) {
  const status = $("sent");
  try {
    const reply = await fetch(
      `/seat/${encodeURIComponent(config.seat)}/say?key=${encodeURIComponent(config.key)}`,
      {method: "POST", headers: {"Content-Type": "application/json"},
       body: JSON.stringify({text: line, tap})});
    const answer = await reply.json();
    status.textContent = reply.ok ? `Sent: ${line}` : answer.error;
  } catch (error) {
    status.textContent = "Not sent: the referee cannot be reached.";
  }
}

if (config.seat) {
  for (const button of document.querySelectorAll("[data-say]")) {
    button.addEventListener("click", () => say(button.dataset.say, true));
  }
  $("say").addEventListener("submit", (e) => {
    e.preventDefault();
    const line = $("line").value.trim();
    if (line) say(line);
    $("line").value = "";
  });
}
