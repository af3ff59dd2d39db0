"""The table's screen: the real server on 127.0.0.1 (an ephemeral port), real
HTTP, and a real headless Chromium (Debian's, driven by Playwright) reading
the pages as a player's phone would. Screenshots of each game's page are kept
in ``cache/artefacts/screen/`` (``REFEREE_ARTEFACTS`` moves it)."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.brain import Drive
from harness.games import golden_game
from referee.cli import build_parser
from referee.live import LiveLoop
from referee.options import make_spec
from referee.protocol import Brain, Caption, Say, Snapshot, SoFar, Tone, Typed, whose
from referee.replay import replay_records
from referee.screen.server import HISTORY, Screen, ScreenError, parse_address
from referee.session import Session
from referee.speech.understanding.meaning import Intent
from referee.table import Reports, Table
from referee.textplay import SpeakerError, split_speaker

CHROMIUM = Path("/usr/bin/chromium")
GOLDEN = Path(__file__).parent / "data" / "golden"
ARTEFACTS = Path(os.environ.get("REFEREE_ARTEFACTS",
                                Path(__file__).parent.parent / "cache" / "artefacts")) / "screen"


@pytest.fixture
def screen() -> Iterator[Screen]:
    shown = Screen(["Ann", "Bob"], "127.0.0.1", 0, title="Race to 65")
    shown.start()
    yield shown
    shown.stop()


def fetch(url: str, data: bytes | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=data,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def events(url: str, count: int) -> list[dict[str, Any]]:
    """The first ``count`` events a page connecting to ``url`` gets."""
    got: list[dict[str, Any]] = []
    with urllib.request.urlopen(url, timeout=5) as stream:
        while len(got) < count:
            line = stream.readline().decode()
            if line.startswith("data: "):
                got.append(json.loads(line[6:]))
    return got


def wait_for_text(page: Any, selector: str, text: str) -> None:
    """Wait (up to 10 s) until the element shows ``text``: captions and state are
    separate events, shown as each arrives."""
    page.wait_for_function("([s, t]) => document.querySelector(s).innerText.includes(t)",
                           arg=[selector, text], timeout=10_000)


# --- the server, over real HTTP ------------------------------------------------------


def test_a_late_page_gets_the_captions_and_the_state_and_a_seat_its_own_secrets(screen):
    screen.publish(Say(1.0, "Ann's turn, 15 seconds.", Tone.TURN))
    screen.publish(Say(1.5, "Your Twist card is Skip.", Tone.PRIVATE, "Bob"))
    screen.publish(Caption(2.0, "Ann", "flip my seven", "mic"))
    screen.publish(Snapshot(2.0, {"turn": "Ann", "game": {"players": {}}}))
    time.sleep(0.2)
    shared = events(screen.url + "events", 3)
    assert [e["type"] for e in shared] == ["say", "heard", "state"]
    assert "Twist" not in json.dumps(shared)  # a secret never reaches the shared screen
    bob = events(screen.seat_url("Bob").replace("?", "/events?"), 4)
    assert [e.get("text") for e in bob[:2]] == ["Ann's turn, 15 seconds.",
                                                "Your Twist card is Skip."]
    ann = events(screen.seat_url("Ann").replace("?", "/events?"), 3)
    assert "Twist" not in json.dumps(ann)


def test_a_seat_pages_text_box_shows_a_move_of_its_own_game():
    shown = Screen(["Ann", "Bob"], "127.0.0.1", 0, title="Turn 7", example="hit")
    shown.start()
    try:
        status, body = fetch(shown.seat_url("Ann"))
        assert status == 200
        assert b'placeholder="hit"' in body
        assert b"flip" not in body
    finally:
        shown.stop()


@pytest.mark.parametrize("path", [
    "seat/Ann", "seat/Ann?key=wrong", "seat/Ann/events", "seat/Ann/events?key=",
    "seat/Ann/say?key=wrong"])
def test_a_seat_without_its_key_gets_403_and_nothing_of_the_page(screen, path):
    status, body = fetch(screen.url + path, b'{"text": "flip my seven"}' if "say" in path
                         else None)
    assert status == 403
    assert b"<html" not in body
    assert screen.lines() == []


@pytest.mark.parametrize("path", [
    "nothing", "seat/Zed?key=x", "static/server.py", "static/..%2fserver.py",
    "static/%2e%2e%2fserver.py", "static/..%2f..%2fpyproject.toml", "static/",
    "static/screen.html"])
def test_unknown_paths_and_files_outside_the_pages_are_404(screen, path):
    status, body = fetch(screen.url + path)
    assert status == 404
    assert b"import" not in body
    assert b"[project]" not in body


@pytest.mark.parametrize(("data", "why"), [
    (b"not json", "Send JSON"), (b"[1, 2]", "Say something"), (b'{"text": 7}', "Say something"),
    (b'{"text": "   "}', "Say something"), (json.dumps({"text": "a" * 501}).encode(), "At most"),
])
def test_a_bad_move_from_a_seat_is_refused_with_a_reason_and_sends_nothing(screen, data, why):
    status, body = fetch(screen.seat_url("Ann").replace("?", "/say?"), data)
    assert status == 400
    assert why in json.loads(body)["error"]
    assert screen.lines() == []


def test_a_move_from_a_seat_is_that_players_line(screen):
    status, _ = fetch(screen.seat_url("Ann").replace("seat/Ann?", "seat/ann/say?"),
                      b'{"text": "flip my seven"}')
    assert status == 200
    assert screen.lines() == [("Ann", "flip my seven", "seat")]
    status, _ = fetch(screen.seat_url("Ann").replace("seat/Ann?", "seat/ann/say?"),
                      b'{"text": "I call 65", "tap": true}')
    assert status == 200
    assert screen.lines() == [("Ann", "I call 65", "tap")]


def test_a_one_tap_move_that_ends_a_turn_or_the_game_is_asked_about_first():
    """A seat page offers the call only when it can win, and a tapped call,
    stay or "I'm out" is asked about before it is played (one tap is easily a
    slip: before, Ann's call at 23 sent all her tiles up at once). What came
    from a seat page is printed as it came."""
    from referee.games.phase10 import Phase10Spec
    from referee.games.race65 import Race65Options, Race65Spec
    from referee.games.turn7 import Turn7Options, Turn7Spec

    printed: list[str] = []
    session = Session(Race65Spec(["Ann", "Bob"], Race65Options(difficulty="easy")))
    table = Table(session, reports=Reports(show=printed.append, stamp=False))
    table.start()
    turns = [("Ann", (12, 11)), ("Bob", (1, 2)), ("Ann", (10, 9)), ("Bob", (3, 4)),
             ("Ann", (8, 7)), ("Bob", (5, 6)), ("Ann", (5, 3)), ("Bob", (7, 8))]
    at = 1.0
    for player, tiles in turns:
        if player == "Ann":
            assert "I call 65" not in table.state["moves"]["Ann"]
        for tile in tiles:
            table.hear_text(f"flip my {tile}", player, at, source="tap")
            at += 1.0
    assert table.state["game"]["players"]["Ann"]["total"] == 65
    assert "Ann (seat page): flip my 12" in printed
    assert "I call 65" in table.state["moves"]["Ann"]
    table.hear_text("I call 65", "Ann", at, source="tap")
    assert printed[-1] == "Ann, did you call 65?"
    assert not table.report.over
    table.hear_text("yes", "Ann", at + 1, source="tap")
    assert table.final["winner"] == "Ann"

    typed = Drive(Race65Spec(["Ann", "Bob"], Race65Options(difficulty="easy",
                                                            confirm_calls="never")))
    typed.start()
    typed.hear("I call 65", "Ann", 1.0)  # typed at the keyboard: taken as typed
    assert typed.state["game"]["players"]["Ann"]["total"] == 0
    assert typed.question is None

    cards = Drive(Turn7Spec(["Ann", "Bob"], Turn7Options(seed=3)))
    cards.start()
    deciding = cards.state["turn"]
    assert "stay" in cards.state["moves"][deciding]  # (a card from the deal)
    said = cards.step(Typed(1.0, "stay", deciding, "tap"))
    assert [s.text for s in said] == [f"{deciding}, do you stay, and keep this round's points?"]
    assert cards.state["turn"] == deciding

    assert Phase10Spec(["Ann", "Bob"]).confirm_tap(Intent.of("out", player="Ann"))


def test_a_race_seat_page_offers_the_instructions_to_others_the_rules_allow():
    from referee.games.race65 import Race65Options, Race65Spec

    race = Drive(Race65Spec(["Ann", "Bob"], Race65Options(difficulty="easy")))
    race.start()
    race.step(Typed(1.0, "Bob, flip your 4 down", "Ann", "tap"))
    assert race.state["game"]["players"]["Bob"]["down"] == [4]
    offered = race.state["moves"]["Ann"]
    assert "Bob, flip your 9 down" in offered
    assert not any("your 4" in line for line in offered)  # (flipped this turn)
    assert race.state["moves"]["Bob"] == []  # not Bob's turn, no call


def test_the_addresses_printed_are_ones_a_phone_can_open_with_qr_codes_only_there(capsys):
    """``--screen 0.0.0.0:PORT`` prints this machine's network addresses (those
    ``ip`` lists), never its host name, which a phone cannot resolve; QR codes
    only for an address a phone can reach, and none with ``--no-qr``."""
    import shutil
    import subprocess

    from referee.screen.server import lan_addresses
    from referee.screen.setup import show_addresses

    found = lan_addresses()
    assert not any(a.startswith("127.") for a in found)
    if shutil.which("ip"):
        listed = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True,
                                check=True).stdout
        wanted = {line.split()[3].split("/")[0] for line in listed.splitlines()} - {"127.0.0.1"}
        assert set(found) == wanted
    everywhere = Screen(["Ann", "Bob"], "0.0.0.0", 0)
    try:
        assert socket.gethostname() not in everywhere.url or socket.gethostname() in found
        if found:
            assert everywhere.url == f"http://{found[0]}:{everywhere.port}/"
        capsys.readouterr()
        show_addresses(everywhere)
        shown = capsys.readouterr().err
        assert shown.count(everywhere.url) == 3  # the screen, and each seat
        assert ("\u2588" in shown or "\u2580" in shown) == (found != [])  # QR block art
        show_addresses(everywhere, qr=False)
        plain = capsys.readouterr().err
        assert "\u2588" not in plain
        assert "\u2580" not in plain
        assert len(plain.splitlines()) <= 5
    finally:
        everywhere._socket.close()
    here = Screen(["Ann", "Bob"], "127.0.0.1", 0)
    try:
        show_addresses(here)
        local = capsys.readouterr().err
        assert "\u2588" not in local
        assert "\u2580" not in local
        assert "0.0.0.0" in local  # how to open it to phones
    finally:
        here._socket.close()


@pytest.mark.slow
def test_a_sentence_is_shown_when_its_sound_starts_and_a_cut_drops_the_rest(screen):
    from referee.protocol import CutVoice

    got: list[tuple[float, str]] = []

    def read() -> None:
        with urllib.request.urlopen(screen.url + "events", timeout=10) as stream:
            while len(got) < 3:
                line = stream.readline().decode()
                if line.startswith("data: "):
                    got.append((time.monotonic(), json.loads(line[6:])["text"]))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    time.sleep(0.3)
    start = time.monotonic()
    screen.publish(Say(1.0, "Ann, 7 down.", Tone.ANNOUNCE), 0.0)
    screen.publish(Say(1.0, "One more flip.", Tone.ANNOUNCE), 0.6)   # after 0.6 s of speech
    screen.publish(Say(1.0, "Bob's turn.", Tone.TURN), 0.4)  # queued behind it, in order
    screen.publish(Say(1.0, "Never said.", Tone.ANNOUNCE), 1.5)
    time.sleep(0.9)
    screen.publish(CutVoice(1.9))  # "stop": what was not said yet is not shown
    reader.join(timeout=5)
    assert [text for _, text in got] == ["Ann, 7 down.", "One more flip.", "Bob's turn."]
    assert got[0][0] - start < 0.3
    assert 0.5 < got[1][0] - start < 1.5
    assert got[2][0] >= got[1][0]
    time.sleep(1.0)  # (past when "Never said." was due)
    late: list[str] = []
    with (urllib.request.urlopen(screen.url + "events", timeout=0.5) as stream,
          contextlib.suppress(TimeoutError)):
        for raw in stream:
            if raw.startswith(b"data: "):
                late.append(json.loads(raw[6:])["text"])
    assert late == ["Ann, 7 down.", "One more flip.", "Bob's turn."]


@pytest.mark.slow
def test_a_slow_page_never_slows_the_game(screen):
    """A page that connects and reads nothing: publishing stays instant, and
    the page's queue is bounded (it loses its oldest events)."""
    stuck = socket.create_connection(("127.0.0.1", screen.port))
    stuck.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
    time.sleep(0.2)
    start = time.perf_counter()
    for n in range(20_000):
        screen.publish(Say(float(n), f"Sentence {n} of a long game, said at the table.",
                           Tone.ANNOUNCE))
    assert time.perf_counter() - start < 2.0
    time.sleep(0.5)
    assert fetch(screen.url)[0] == 200  # the server still answers
    stuck.close()


def test_the_screen_says_why_it_cannot_start():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(ScreenError, match=r"cannot listen on 127\.0\.0\.1"):
            Screen(["Ann", "Bob"], "127.0.0.1", port)
    with pytest.raises(ScreenError, match="cannot listen"):
        Screen(["Ann", "Bob"], "no-such-host.invalid", 0)
    for bad in ("", "port", "127.0.0.1:99999", "12:ab"):
        with pytest.raises(ScreenError, match="--screen takes a port"):
            parse_address(bad)


def test_a_game_asked_to_show_on_a_busy_port_does_not_start(tmp_path):
    from referee.cli import main

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(["play", "race65", "--players", "Ann", "Bob", "--input", "text",
                     "--voice", "none", "--no-log", "--screen", str(port)])
    assert code != 0


# --- in a real browser -------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed (./run test installs it: scripts/setup.sh)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"])
        yield chromium
        chromium.close()


def golden_table(stem: str, lines: int, private: dict[str, str] | None = None
                 ) -> tuple[Table, Screen, list[str]]:
    """A table playing the first ``lines`` lines of a golden script, typed, with
    a screen; what the referee printed."""
    script = (GOLDEN / f"{stem}.script").read_text().splitlines()
    game, argv = golden_game(GOLDEN / f"{stem}.script")
    for player, device in (private or {}).items():
        argv = [a.replace(f"{player}=headphones", f"{player}={device}") for a in argv]
    args = build_parser().parse_args(["play", game, *argv])
    spec = make_spec(args, args.game)
    session = Session(spec)
    screen = Screen(spec.players, "127.0.0.1", 0, title=spec.title)
    screen.start()
    printed: list[str] = []
    table = Table(session,
                  reports=Reports(show=printed.append, stamp=False, screen=screen.publish))
    table.start()
    played = [line for line in script if line.strip() and not line.startswith("#")]
    for line in played[:lines]:
        at_text, _, rest = line.partition("]")
        at = float(at_text.strip("[ "))
        try:
            speaker, text = split_speaker(rest.strip(), spec.players)
        except SpeakerError:
            continue
        if text:
            table.hear_text(text, speaker, at)
        else:
            table.advance(at)
    return table, screen, printed


#: Each game's golden script: its first dozen lines (mid-game: whose turn, the
#: clock) and all of it (a whole game, to its end).
GAMES = [(stem, lines) for stem in ("race65-phase-seven-hard", "shut-the-box-physical",
                                    "turn7-virtual", "phase10-twist-physical")
         for lines in (12, 10_000)]


@pytest.mark.slow
@pytest.mark.parametrize(("stem", "lines"), GAMES,
                         ids=[f"{g[0]}-{'whole' if g[1] > 100 else 'begun'}" for g in GAMES])
def test_the_page_shows_the_board_and_every_sentence_in_order(browser, stem, lines):
    table, screen, printed = golden_table(stem, lines)
    try:
        page = browser.new_page(viewport={"width": 1000, "height": 1400})
        page.goto(screen.url)
        said = [line for line in printed if " only: " not in line]
        # A page that opens late gets the last HISTORY events (sentences and
        # what was heard): the end of what was said, in order.
        least = min(len(said), HISTORY // 2)
        page.wait_for_function(f"document.querySelectorAll('#captions li').length >= {least}",
                               timeout=10_000)
        captions = page.locator("#captions li").all_inner_texts()
        assert captions == said[-len(captions):]
        shown = table.state["game"]
        columns = page.locator("thead th").evaluate_all("ths => ths.map(t => t.dataset.key)")[1:]
        for player, fields in shown["players"].items():
            row = page.locator(f'tr[data-player="{player}"]')
            assert row.count() == 1
            for key, value in fields.items():
                cell = row.locator("td").nth(columns.index(key))
                if isinstance(value, list) and key == "down":
                    assert cell.locator("li.down").count() == len(value)
                elif isinstance(value, list) and all(isinstance(v, int) for v in value):
                    assert cell.locator("li").all_inner_texts() == [str(v) for v in value]
                elif isinstance(value, list):  # (words: Phase 10's groups laid)
                    assert cell.inner_text() == ", ".join(value)
                elif isinstance(value, bool) or value is None:
                    assert cell.inner_text() == {True: "yes", False: "no", None: "\u2013"}[value]
                elif isinstance(value, int | str):
                    assert cell.inner_text() == str(value)
        if isinstance(shown.get("board"), str):  # a board of spaces, with pawns
            spaces = page.locator(".track li")
            assert spaces.count() == len(shown["board"].split()) + 1
            for player, fields in shown["players"].items():
                where = spaces.last if fields["finished"] else spaces.nth(fields["space"] - 1)
                assert player in where.locator(".pawns").inner_text()
        turn = table.state["turn"]
        if turn is not None:
            assert f"{turn} to play" in page.locator("#turn").inner_text()
        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTEFACTS / f"{stem}-{lines}.png"), full_page=True)
        page.close()
    finally:
        screen.stop()


#: The contrast of every piece of text on a page against what is behind it
#: (WCAG 2.1's relative luminance), the lowest first: [ratio, text, colours].
CONTRASTS = """() => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const behind = (node) => {
    for (let n = node; n; n = n.parentElement) {
      const c = rgb(getComputedStyle(n).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const ratio = (a, b) => {
    const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  };
  const out = [];
  for (const node of document.querySelectorAll("body *")) {
    const style = getComputedStyle(node);
    if (style.display === "none" || style.visibility === "hidden" || node.closest("[hidden]"))
      continue;
    const own = [...node.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim());
    if (own) {
      const fg = rgb(style.color).slice(0, 3), bg = behind(node);
      out.push([ratio(fg, bg), node.textContent.trim().slice(0, 40), style.color,
                String(bg)]);
    }
    if (node.tagName === "INPUT" && node.placeholder) {
      const fg = rgb(getComputedStyle(node, "::placeholder").color).slice(0, 3);
      out.push([ratio(fg, behind(node)), "placeholder " + node.placeholder, String(fg),
                String(behind(node))]);
    }
  }
  return out.sort((a, b) => a[0] - b[0]);
}"""


@pytest.mark.slow
@pytest.mark.parametrize("stem", ["race65-phase-seven-hard", "phase10-twist-virtual"])
def test_every_text_on_both_pages_meets_wcag_aa_contrast(browser, stem):
    """Every text on the shared screen and on a seat page, face-down tiles
    and the text box's hint included, has a contrast of at least 4.5:1 with
    what is behind it (WCAG 2.1 AA; before: face-down tiles #777 on #333,
    2.8:1)."""
    _, screen, _ = golden_table(stem, 20, {"Bob": "screen"})
    try:
        for url in (screen.url, screen.seat_url("Bob")):
            page = browser.new_page()
            page.goto(url)
            page.wait_for_function("document.querySelectorAll('#captions li').length > 3",
                                   timeout=10_000)
            page.wait_for_function("document.querySelector('#board').children.length > 0",
                                   timeout=10_000)
            texts = page.evaluate(CONTRASTS)
            assert len(texts) > 10
            low = [t for t in texts if t[0] < 4.5]
            assert low == [], low
            if stem.startswith("race65"):  # (face-down tiles were the worst)
                assert page.locator("li.down").count() > 0
            page.close()
    finally:
        screen.stop()


@pytest.mark.slow
@pytest.mark.parametrize(("stem", "lines"), GAMES,
                         ids=[f"{g[0]}-{'whole' if g[1] > 100 else 'begun'}" for g in GAMES])
def test_every_board_fits_a_phone_and_says_things_in_words(browser, stem, lines):
    """A seat page on a 360 px phone never scrolls sideways (before: Turn 7's
    table was some 627 px), and shows no raw keys ("rounds 0", "hands 1",
    "board 1 2 T ...", "winner Bob"): each fact is titled in words, the
    winner is in the heading."""
    table, screen, _ = golden_table(stem, lines)
    try:
        player = table.state["players"][0]
        page = browser.new_page(viewport={"width": 360, "height": 800})
        page.goto(screen.seat_url(player))
        page.wait_for_function("document.querySelector('#board').children.length > 0",
                               timeout=10_000)
        page.wait_for_timeout(200)
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= 360, f"the page is {wide} px wide"
        facts = page.locator("#board dt").all_inner_texts()
        raw = {"winner", "board", "rounds", "hands", "round", "roll", "players", "turn"}
        assert not [f for f in facts if f in raw or f[:1].islower()], facts
        assert "Winner" not in facts
        cells = page.locator("#board td").evaluate_all(
            "tds => tds.map(t => getComputedStyle(t, '::before').content)")
        assert cells
        assert all(c not in ("none", "normal", '""') for c in cells)  # each value titled
        if table.state["over"]:
            assert "won" in page.locator("#turn").inner_text()
        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTEFACTS / f"{stem}-{lines}-phone.png"), full_page=True)
        page.close()
    finally:
        screen.stop()


@pytest.mark.slow
def test_after_the_win_a_seat_offers_play_again_and_hides_what_is_empty(browser):
    """Mid-game: undo, no yes/no without a question, no empty "For you only";
    after the win: Play again and That's all, no undo; a tap on Play again
    starts the new game."""
    table, screen, _ = golden_table("shut-the-box-physical", 10_000)
    visible = ("[...document.querySelectorAll('#answers button')].filter(b => !b.hidden)"
               ".map(b => b.textContent)")
    try:
        assert table.state["over"]
        page = browser.new_page(viewport={"width": 360, "height": 800})
        page.goto(screen.seat_url("Ann"))
        wait_for_text(page, "#turn", "won")
        assert page.evaluate(visible) == ["Play again", "That\u2019s all", "Repeat", "Help"]
        assert page.locator("#for-you").is_hidden()
        page.click("#answers button:text-is('Play again')")
        for _ in range(100):
            for player, line, source in screen.lines():
                table.hear_text(line, player, table.now + 1, source=source)
            if not table.state["over"]:
                break
            time.sleep(0.05)
        assert not table.state["over"]
        wait_for_text(page, "#captions", "New game.")
        page.wait_for_function("!document.querySelector(\"[data-say='undo']\").hidden",
                               timeout=10_000)
        assert page.evaluate(visible) == ["Repeat", "Help", "Undo"]
        page.close()
    finally:
        screen.stop()


@pytest.mark.slow
def test_the_countdown_moves_on_the_page(browser):
    table, screen, _ = golden_table("race65-phase-seven-hard", 0)
    try:
        table.advance(table.busy_until + 0.1)  # the turn's clock starts once it is said
        page = browser.new_page()
        page.goto(screen.url)
        page.wait_for_function("/\\d+ s/.test(document.querySelector('#clock').textContent)",
                               timeout=10_000)
        first = int(page.locator("#clock").inner_text().split()[0])
        page.wait_for_function(
            f"parseInt(document.querySelector('#clock').textContent) < {first}", timeout=5_000)
        assert 0 < first <= 15
        page.close()
    finally:
        screen.stop()


def page_left(page: Any) -> float:
    page.wait_for_function("document.querySelector('#clock').dataset.left !== undefined",
                           timeout=10_000)
    return float(page.locator("#clock").get_attribute("data-left") or "nan")


@pytest.mark.slow
def test_a_page_opened_or_reconnected_mid_turn_shows_the_referees_clock(browser, screen):
    """The clock on a page agrees with the referee's to within half a second,
    whenever the page was opened: here 20-second turns, the page opened 3 s
    into one, then reloaded 2 s later (before: 20 s shown at opening)."""
    published = time.monotonic()
    screen.publish(Snapshot(100.0, {"turn": "Ann", "deadline": 120.0, "game": {"players": {}}}))
    time.sleep(3.0)
    page = browser.new_page()
    page.goto(screen.url)
    assert abs(page_left(page) - (20.0 - (time.monotonic() - published))) < 0.5
    time.sleep(2.0)
    assert abs(page_left(page) - (20.0 - (time.monotonic() - published))) < 0.5
    page.reload()
    page.wait_for_timeout(300)
    assert abs(page_left(page) - (20.0 - (time.monotonic() - published))) < 0.5
    screen.publish(Snapshot(106.0, {"turn": "Bob", "deadline": 126.0, "game": {"players": {}}}))
    wait_for_text(page, "#turn", "Bob to play")
    assert abs(page_left(page) - 20.0) < 0.5  # a new turn: the whole of it
    screen.publish(Snapshot(107.0, {"turn": None, "deadline": None, "game": {"players": {}}}))
    page.wait_for_function("document.querySelector('#clock').textContent === ''",
                           timeout=5_000)
    page.close()


@pytest.mark.slow
def test_a_seat_page_shows_its_own_twist_card_and_not_anothers(browser):
    _, screen, printed = golden_table("phase10-twist-virtual", 30, {"Bob": "screen"})
    assert any("to Bob only" in line for line in printed)
    try:
        bob, ann = browser.new_page(), browser.new_page()
        bob.goto(screen.seat_url("Bob"))
        ann.goto(screen.seat_url("Ann"))
        bob.wait_for_function("document.querySelectorAll('#private li').length > 0",
                              timeout=10_000)
        card = bob.locator("#private li").first.inner_text()
        assert "Twist" in card or "card" in card
        ann.wait_for_function("document.querySelectorAll('#captions li').length > 5",
                              timeout=10_000)
        assert ann.locator("#private li").count() == 0
        assert card not in ann.content()
        screen_page = browser.new_page()
        screen_page.goto(screen.url)
        screen_page.wait_for_function("document.querySelectorAll('#captions li').length > 5")
        assert card not in screen_page.content()
        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        bob.screenshot(path=str(ARTEFACTS / "phase10-seat-bob.png"), full_page=True)
    finally:
        screen.stop()


@pytest.mark.slow
def test_a_move_made_on_a_seat_page_is_played_and_an_undo_asked_about(browser):
    from referee.games.race65 import Race65Options, Race65Spec

    spec = Race65Spec(["Ann", "Bob"], Race65Options(difficulty="easy"))
    screen = Screen(spec.players, "127.0.0.1", 0, title="Race to 65")
    screen.start()
    table = Table(Session(spec),
                  reports=Reports(show=lambda line: None, stamp=False, screen=screen.publish))
    loop = LiveLoop(table, microphone=None, keyboard=None, seat_lines=screen.lines,
                    max_seconds=60.0)
    worker = threading.Thread(target=loop.run, daemon=True)
    worker.start()
    try:
        seat = browser.new_page()
        assert seat.goto(screen.seat_url("Ann").replace("key=", "key=x")).status == 403
        seat.goto(screen.seat_url("Ann"))
        seat.fill("#line", "flip my seven")
        seat.press("#line", "Enter")
        shared = browser.new_page()
        shared.goto(screen.url)
        shared.wait_for_function(
            "document.querySelectorAll('tr[data-player=\"Ann\"] li.down').length === 1",
            timeout=10_000)
        assert table.state["game"]["players"]["Ann"]["down"] == [7]
        wait_for_text(shared, "#captions", "Ann, 7 down.")  # (shown as its sound starts)
        seat.wait_for_selector("#moves button:text-is('flip my 3')")
        assert "flip my 7" not in seat.locator("#moves").inner_text()  # (flipped this turn)
        seat.click("#moves button:text-is('flip my 3')")  # a move as a button
        shared.wait_for_function(
            "document.querySelectorAll('tr[data-player=\"Ann\"] li.down').length === 2",
            timeout=10_000)
        assert sorted(table.state["game"]["players"]["Ann"]["down"]) == [3, 7]
        seat.wait_for_function(  # Ann's turn is over: no flips (and no call at 10)
            "[...document.querySelectorAll('#moves button')].every("
            "b => !b.textContent.startsWith('flip'))", timeout=10_000)
        seat.click("text=Undo")
        wait_for_text(shared, "#captions", "do you agree to undo")
        wait_for_text(shared, "#question", "Bob, do you agree")  # (the state comes after it)
        assert sorted(table.state["game"]["players"]["Ann"]["down"]) == [3, 7]  # asked, not done
        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        seat.screenshot(path=str(ARTEFACTS / "race65-seat-ann.png"), full_page=True)
    finally:
        loop.stop()
        worker.join(timeout=5)
        screen.stop()


@pytest.mark.slow
def test_a_logged_game_replays_on_the_screen(browser, tmp_path):
    from referee.cli import main
    from referee.gamelog import read_log
    from referee.games.base import GameSpec
    from referee.records import InputRecord, SaidRecord
    from referee.tableplay import replay_to_screen

    script = GOLDEN / "shut-the-box-virtual.script"
    header = next(line for line in script.read_text().splitlines() if line.startswith("# args:"))
    path = tmp_path / "game.jsonl"
    assert main(["play", "shut-the-box", *shlex.split(header.removeprefix("# args:")),
                 "--script", str(script), "--log", str(path)]) == 0
    logged = read_log(path)
    def rebuilt() -> GameSpec:
        return make_spec(build_parser().parse_args(
            ["play", "shut-the-box", *shlex.split(header.removeprefix("# args:"))]),
            "shut-the-box")

    spec = rebuilt()
    session = Session(spec)
    screen = Screen(spec.players, "127.0.0.1", 0, title="Shut the Box")
    screen.start()
    try:
        waits: list[float] = []
        replay_to_screen(session, logged.records, screen.publish, 0.25, waits.append)
        inputs = sum(isinstance(r, InputRecord) for r in logged.records)
        assert waits == [0.25] * inputs  # one pause a move
        said = [r.text for r in logged.records if isinstance(r, SaidRecord) and r.to is None]
        page = browser.new_page()
        page.goto(screen.url)
        page.wait_for_function(
            f"document.querySelectorAll('#captions li').length >= {min(len(said), 200)}",
            timeout=10_000)
        assert page.locator("#captions li").all_inner_texts() == said[-200:]
        assert "Game over" in page.locator("#turn").inner_text()
        assert replay_records(Session(rebuilt()), logged.records).state["game"] == json.loads(
            fetch(screen.url + "state")[1])["game"]
    finally:
        screen.stop()


SEAT_GAMES = ["race65-phase-seven-easy", "shut-the-box-physical", "turn7-physical",
              "phase10-twist-physical"]


@pytest.mark.slow
@pytest.mark.parametrize("stem", SEAT_GAMES)
def test_a_whole_game_played_from_seat_pages_is_the_typed_game(stem):
    """Every line of a golden game sent from its player's seat page (as the
    page's script POSTs it) into a live loop: the game ends exactly as the same
    lines typed with the players' names do (a line without a name comes from
    the seat of the player the referee would take it from)."""
    from referee.records import InputRecord
    from referee.textplay import run_script
    from referee.wording import SOMEONE

    script = (GOLDEN / f"{stem}.script").read_text().splitlines()
    game, rest = golden_game(GOLDEN / f"{stem}.script")
    argv = ["play", game, *rest]
    spec = make_spec(build_parser().parse_args(argv), game)
    brain: Brain = Session(spec)
    screen = Screen(spec.players, "127.0.0.1", 0)
    screen.start()
    records: list[Any] = []
    table = Table(brain, reports=Reports(show=lambda line: None, screen=screen.publish,
                                           record=records.extend))
    loop = LiveLoop(table, microphone=None, keyboard=None, seat_lines=screen.lines,
                    max_seconds=300.0)
    worker = threading.Thread(target=loop.run, daemon=True)
    worker.start()
    typed: list[str] = []
    try:
        for line in script:
            if line.startswith("#") or not line.strip():
                continue
            speaker, text = split_speaker(line.partition("]")[2].strip(), spec.players)
            if not text or table.report.left:
                continue
            who = speaker or whose(brain, SoFar(table.now, text, None))
            who = spec.players[0] if who in (None, SOMEONE) else who
            heard = sum(isinstance(r, InputRecord) for r in records)
            status, _ = fetch(screen.seat_url(who).replace("?", "/say?"),
                              json.dumps({"text": text}).encode())
            assert status == 200
            deadline = time.monotonic() + 10
            while sum(isinstance(r, InputRecord) for r in records) == heard:
                assert time.monotonic() < deadline, f"{who}: {text} was never heard"
                time.sleep(0.01)
            typed.append(f"{who}: {text}")
    finally:
        loop.stop()
        worker.join(timeout=5)
        screen.stop()
    again = run_script(Session(make_spec(build_parser().parse_args(argv), game)), typed,
                       lambda line: None)
    assert table.final == again.final
    assert table.report.over


@pytest.mark.parametrize("script", sorted(GOLDEN.glob("*.script")), ids=lambda p: p.stem)
def test_every_move_a_seat_page_offers_is_heard_as_a_move_the_rules_take(script):
    """A golden game typed line by line; after each line, every sentence each
    player's seat page offers as a button is heard, from that player, as a
    move (not a question, not nothing) that the rules accept there and then."""
    from harness.brain import Drive, Kept
    from referee.engine.core import Rejection
    from referee.wording import NOT_MOVES

    lines = script.read_text().splitlines()
    game, argv = golden_game(script)
    spec = make_spec(build_parser().parse_args(["play", game, *argv]), game)
    kept = Kept(spec)
    drive = Drive(spec)
    drive.start()
    offered = 0
    at = 0.0
    for line in lines:
        if line.startswith("#") or not line.strip():
            continue
        at = max(at, float(line.partition("]")[0].strip("[ ")))
        speaker, text = split_speaker(line.partition("]")[2].strip(), spec.players)
        if text:
            drive.hear(text, speaker, at)
        else:
            drive.tick(at)
        moves = drive.state["moves"]
        for player, sentences in moves.items():
            for sentence in sentences:
                heard = drive.matcher.match(sentence, player)
                assert heard.kind not in NOT_MOVES, (sentence, player, heard)
                try:
                    action = spec.action_for(heard.intent, player, kept.game)
                    kept.game.rules.apply(kept.game.state, action, at)
                except Rejection as refused:
                    pytest.fail(f"{player}: {sentence!r} offered, refused: {refused.sentence}")
                offered += 1
    assert offered > 0


@pytest.mark.parametrize(("level", "title"), [("easy", "Race to 65"), ("medium", "Race to 67"),
                                              ("hard", "Race to 70")])
def test_the_screen_is_headed_with_the_games_real_target(level: str, title: str) -> None:
    """The captions say "Race to 67" in a medium game: so does the screen's heading."""
    from referee.screen.setup import screen_for

    args = build_parser().parse_args(["play", "race65", "--difficulty", level, "--screen",
                                      "127.0.0.1:0", "--input", "text", "--no-qr"])
    with screen_for(args, make_spec(args, "race65")) as shown:
        assert shown is not None
        status, page = fetch(shown.url)
    assert status == 200
    assert f"<h1>{title}</h1>" in page.decode()


#: axe-core (the accessibility engine: the copy axe-playwright-python bundles)
#: on the page, at WCAG 2.2 AA: its violations, each with the nodes it found.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]


def axe_violations(page: Any) -> list[dict[str, Any]]:
    from importlib.resources import files

    if not page.evaluate("typeof axe !== 'undefined'"):
        page.evaluate((files("axe_playwright_python") / "axe.min.js").read_text(encoding="utf-8"))
    results = page.evaluate(
        "(tags) => axe.run(document, {runOnly: {type: 'tag', values: tags},"
        " resultTypes: ['violations']})", AXE_TAGS)
    return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
             "nodes": [n["html"][:120] for n in v["nodes"]]} for v in results["violations"]]


#: A game at each moment a player meets the pages: before the first move,
#: mid-game, with a question open ("end the game": the others are asked),
#: and after the win.
MOMENTS = {"before": 0, "during": 12, "question": 12, "won": 10_000}


@pytest.mark.slow
@pytest.mark.parametrize("stem", ["race65-phase-seven-hard", "shut-the-box-physical",
                                  "turn7-virtual", "phase10-twist-virtual"])
def test_both_pages_pass_axe_core_at_wcag_2_2_aa(browser, stem):
    """#73 item 19: axe-core, the engine accessibility engineers use, finds
    no violation at WCAG 2.2 AA on the screen or a seat page, on a 360 px
    phone and at desktop width, before, during, with a question open and
    after the win, in every game."""
    found = {}
    for moment, lines in MOMENTS.items():
        table, screen, _ = golden_table(stem, lines)
        try:
            if moment == "question":
                asker = table.state["turn"] or table.state["players"][0]
                table.hear_text("end the game", asker, table.now + 1)
                assert table.state["question"] is not None
            else:
                assert (moment == "won") == table.state["over"]
            seat = table.state["players"][-1]
            for name, url in (("screen", screen.url), ("seat", screen.seat_url(seat))):
                page = browser.new_page(viewport={"width": 360, "height": 900})
                page.goto(url)
                page.wait_for_function(
                    "document.querySelectorAll('#captions li').length > 0", timeout=10_000)
                for width in (360, 1280):
                    page.set_viewport_size({"width": width, "height": 900})
                    page.wait_for_timeout(100)
                    violations = axe_violations(page)
                    if violations:
                        found[f"{moment} {name} {width}px"] = violations
                page.close()
        finally:
            screen.stop()
    assert found == {}


def typed_table(argv: list[str], lines: list[str]) -> tuple[Table, Screen]:
    """A table with a screen, playing ``lines`` ("Ann: ...") typed a second apart."""
    args = build_parser().parse_args(["play", *argv])
    spec = make_spec(args, args.game)
    screen = Screen(spec.players, "127.0.0.1", 0, title=spec.title)
    screen.start()
    table = Table(Session(spec), reports=Reports(show=lambda text: None, stamp=False,
                                                 screen=screen.publish))
    table.start()
    for at, line in enumerate(lines, start=1):
        speaker, text = split_speaker(line, spec.players)
        table.hear_text(text, speaker, table.busy_until + at)
    return table, screen


@pytest.mark.slow
def test_phase10_on_a_phone_keeps_its_facts_readable_and_never_scrolls_sideways(browser):
    """Issue #83: at 360 px the page was 365 px wide, and "Still to say if
    they made their phase" left its value one letter a line ("B / o / b")."""
    table, screen = typed_table(
        ["phase10-twist", "--players", "Ann", "Bob", "Cy"],
        ["Ann: I lay down my phase three fives and three sevens", "Ann: I'm out"])
    try:
        assert table.state["game"]["to_report"]
        for url in (screen.url, screen.seat_url("Bob")):
            page = browser.new_page(viewport={"width": 360, "height": 800})
            page.goto(url)
            wait_for_text(page, "#board", "Still to say")
            page.wait_for_timeout(200)
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= 360, f"{url}: the page is {wide} px wide"
            value = page.locator("#board dt:text-is('Still to say if they made their phase')"
                                 " + dd")
            assert value.inner_text() == "Bob, Cy"
            box = value.bounding_box()
            assert box is not None
            assert box["height"] < 2.5 * box_line(page, value), "the value wraps letter by letter"
            page.close()
    finally:
        screen.stop()


def box_line(page: Any, locator: Any) -> float:
    """One line's height of ``locator``'s text, in px."""
    return float(locator.evaluate("e => parseFloat(getComputedStyle(e).lineHeight)"))


@pytest.mark.slow
def test_turn7_s_board_shows_who_holds_a_life_saver(browser):
    """Issue #83: a held Life Saver decides busts and the odds mention it, yet
    the board never showed it: a deaf player could not see who holds one."""
    table, screen = typed_table(
        ["turn7", "--players", "Ann", "Bob", "Cy", "--deck", "physical"],
        ["Bob: life saver", "Cy: six", "Ann: five"])
    try:
        players = table.state["game"]["players"]
        assert [players[p]["life_saver"] for p in ("Ann", "Bob", "Cy")] == [False, True, False]
        for url in (screen.url, screen.seat_url("Ann")):
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(url)
            wait_for_text(page, "#board", "Life Saver")
            cells = page.locator("#board tr[data-player='Bob'] td[data-label='Life Saver']")
            assert cells.inner_text() == "yes"
            assert page.locator("#board tr[data-player='Ann'] td[data-label='Life Saver']"
                                ).inner_text() == "no"
            page.close()
    finally:
        screen.stop()
