"""The table's screen: a small web server beside the game.

:class:`Screen` serves the board, the clock and the captions to any browser
at the table (``/``) and a page per player (``/seat/<name>?key=...``) with
what only that player may see and a way to play without speaking. It is fed
only the referee's own outputs (:mod:`referee.protocol`): every sentence as
it is said (:class:`~referee.protocol.Say`), who said what
(:class:`~referee.protocol.Caption`) and the public state after every change
(:class:`~referee.protocol.Snapshot`); it never reads the game.

Decisions:

* Starlette on uvicorn, in a thread of its own with its own event loop;
  pages get events by server-sent events (one-way, plain HTTP, reconnect
  built into the browser). The socket is bound before the game starts, so a
  busy port or a bad address is said at once.
* :meth:`Screen.publish` never blocks the game: it hands the event to the
  server's loop (``call_soon_threadsafe``); each page has a bounded queue,
  and a page too slow to keep up loses its oldest events, never the game's
  time. A page that connects late gets the last :data:`HISTORY` captions and
  the latest state first.
* A seat page needs its seat's key (printed at the start, as a link and a QR
  code): without it, 403 and nothing of the page. What it sends goes to the
  game as a line typed by that player (:meth:`Screen.lines`), through the
  same path as speech and typed lines: confirmations, agreements, undo.
* A seat page is its player's microphone too (:mod:`referee.screen.phones`):
  ``/seat/<name>/listen?key=...`` takes a WebSocket of 16 kHz PCM, with the
  same key; a screen made without :class:`~referee.screen.phones.PhoneSeats`
  (the referee does not listen to voices) refuses it with the reason.
* Only the package's own files are served, by name (no file system path is
  read from a request); every other path is 404.
* The clock: a state with a turn deadline is stamped, as it is sent to a
  page, with the seconds ``left`` at that moment (the deadline less the
  state's time, less how long ago it was published: the referee publishes
  as it happens). A page opened or reconnected mid-turn counts down from
  there, never from the whole turn, and agrees with the referee's
  countdown (tested in Chromium to within half a second).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import queue
import secrets
import socket
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from referee.protocol import Caption, CutVoice, Output, Say, Snapshot, Tone
from referee.wording import NoSuchPlayer, player_named

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection, Request
    from starlette.responses import Response
    from starlette.websockets import WebSocket

    from referee.screen.phones import PhoneSeats

log = logging.getLogger(__name__)

#: Captions a page that connects late is sent first.
HISTORY = 200
#: Events a page may fall behind by before its oldest are dropped.
QUEUE = 500
#: Seconds between WebSocket pings, and how long an answer may take.
PING = 5.0
#: The longest line a seat page may send (as a typed line).
MAX_LINE = 500
#: The files a page may ask for, by name.
FILES = {"screen.js": "text/javascript", "screen.css": "text/css",
         "phone.js": "text/javascript", "capture.js": "text/javascript"}


class ScreenError(RuntimeError):
    """The screen could not start (a busy port, a bad address)."""


@dataclass(frozen=True)
class Seat:
    """A player's page: its name and its key."""

    name: str
    key: str


def lan_addresses() -> list[str]:
    """This machine's IPv4 addresses on its networks, as a phone at the table
    would reach it (never loopback; the host name is no use: a phone cannot
    resolve it). Each interface's address (Linux: ``SIOCGIFADDR``), the one
    the default route leaves by first; elsewhere, what the host name resolves
    to. Empty when there is no network."""
    found: list[str] = []
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # the default route's source: no packet is sent
        found.append(probe.getsockname()[0])
    try:
        import fcntl
        import struct

        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            for _, name in socket.if_nameindex():
                with contextlib.suppress(OSError):
                    packed = struct.pack("256s", name[:15].encode())
                    reply = fcntl.ioctl(probe.fileno(), 0x8915, packed)  # SIOCGIFADDR
                    found.append(socket.inet_ntoa(reply[20:24]))
    except (ImportError, OSError, AttributeError):
        with contextlib.suppress(OSError):
            infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
            found += [str(info[4][0]) for info in infos]
    reachable = [a for a in found if not a.startswith(("127.", "0."))]
    return list(dict.fromkeys(reachable))


def parse_address(text: str) -> tuple[str, int]:
    """``"8080"`` -> ("127.0.0.1", 8080); ``"0.0.0.0:8080"`` -> ("0.0.0.0", 8080).

    >>> parse_address("8080"), parse_address("0.0.0.0:0")
    (('127.0.0.1', 8080), ('0.0.0.0', 0))
    """
    host, _, port = text.strip().rpartition(":")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ScreenError(f"--screen takes a port, or HOST:PORT (as 0.0.0.0:8080), "
                          f"not {text!r}.")
    return host.strip("[]") or "127.0.0.1", int(port)


class Screen:
    """A web server showing one table's game; start it, publish outputs, stop it."""

    def __init__(self, players: Iterable[str], host: str = "127.0.0.1", port: int = 0,
                 title: str = "", example: str = "", phones: PhoneSeats | None = None,
                 tls: tuple[Path, Path] | None = None) -> None:
        self.title = title
        #: The certificate and key to serve HTTPS with (:mod:`referee.screen.tls`), or None.
        self.tls = tls
        #: The seat pages' microphones (None: the referee does not listen to voices).
        self.phones = phones
        #: A move as players say it, shown in a seat page's empty text box.
        self.example = example
        self.seats = {p: Seat(p, secrets.token_urlsafe(9)) for p in players}
        self.host = host
        self._socket = self._bind(host, port)
        self.port: int = self._socket.getsockname()[1]
        self._lines: queue.SimpleQueue[tuple[str, str, str]] = queue.SimpleQueue()
        self._history: deque[dict[str, Any]] = deque(maxlen=HISTORY)
        self._private: dict[str, deque[dict[str, Any]]] = {
            p: deque(maxlen=HISTORY) for p in self.seats}
        self._state: dict[str, Any] | None = None
        #: Each page's queue and the seat it belongs to (None: the shared screen).
        self._pages: dict[asyncio.Queue[dict[str, Any]], str | None] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Sentences waiting for their sound to start (in order), and when the last is due.
        self._waiting: deque[asyncio.TimerHandle] = deque()
        self._last_due = 0.0
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @staticmethod
    def _bind(host: str, port: int) -> socket.socket:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            family, kind, proto, _, address = infos[0]
            sock = socket.socket(family, kind, proto)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            sock.listen(64)
        except OSError as error:
            why = error.strerror or str(error)
            raise ScreenError(f"The screen cannot listen on {host}:{port}: {why}.") from error
        sock.setblocking(False)
        return sock

    # --- addresses -----------------------------------------------------------------------
    @property
    def everywhere(self) -> bool:
        """Whether the screen listens on every address (for phones at the table)."""
        return self.host in ("0.0.0.0", "::", "")

    @property
    def local(self) -> bool:
        """Whether only this machine can open the pages (a loopback address)."""
        return self.host in ("localhost", "::1") or self.host.startswith("127.")

    @property
    def urls(self) -> list[str]:
        """Every address the pages can be opened at: this machine's network
        addresses when it listens on all of them (loopback when it has none)."""
        hosts = [self.host]
        if self.everywhere:
            hosts = lan_addresses() or ["127.0.0.1"]
        scheme = "https" if self.tls else "http"
        return [f"{scheme}://{f'[{h}]' if ':' in h else h}:{self.port}/" for h in hosts]

    @property
    def url(self) -> str:
        """The address to open (the first of :attr:`urls`)."""
        return self.urls[0]

    def seat_url(self, player: str) -> str:
        seat = self.seats[player]
        return f"{self.url}seat/{quote(seat.name)}?key={seat.key}"

    # --- running -------------------------------------------------------------------------
    def start(self) -> None:
        """Serve in a thread of its own; returns once the server answers."""
        import uvicorn

        cert, key = self.tls or (None, None)
        # (WebSocket pings every 5 s: a phone that locked or left the network
        # stops listening within about 10 s, and the table is told.)
        config = uvicorn.Config(self.app(), log_level="warning", access_log=False,
                                lifespan="on", ssl_certfile=cert, ssl_keyfile=key,
                                ws_ping_interval=PING, ws_ping_timeout=PING)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._serve, name="screen", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10.0
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise ScreenError("The screen's server did not start.")
            time.sleep(0.01)

    def _serve(self) -> None:
        try:
            self._server.run(sockets=[self._socket])
        except BaseException:  # (SystemExit from a server that cannot start)
            log.exception("the screen's server stopped")

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        self._socket.close()
        if self.phones is not None:
            self.phones.close()

    # --- from the game ---------------------------------------------------------------
    def publish(self, output: Output, after: float = 0.0) -> None:
        """Show one of the referee's outputs (others are ignored), ``after``
        seconds from now: a sentence is shown when its sound starts (the
        speakers play the sentences queued before it first). A cut voice
        (:class:`~referee.protocol.CutVoice`) drops the sentences not shown
        yet: they are never said. Never blocks."""
        loop = self._loop
        if isinstance(output, CutVoice):
            if loop is not None and not loop.is_closed():
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(self._cut)
            return
        event = _event(output)
        if event is None:
            return
        if loop is None or loop.is_closed():
            self._remember(event)
            return
        with contextlib.suppress(RuntimeError):  # (the loop closed meanwhile)
            loop.call_soon_threadsafe(self._later, event, after)

    def _later(self, event: dict[str, Any], after: float) -> None:
        """Show ``event`` now, or a sentence once the ones before it were shown
        and its sound starts (in order: each due a hair after the last)."""
        if event["type"] != "say" or (after <= 0.0 and not self._waiting):
            self._fan_out(event)
            return
        assert self._loop is not None
        due = max(self._loop.time() + after, self._last_due + 1e-6)
        self._last_due = due
        self._waiting.append(self._loop.call_at(due, self._shown_later, event))

    def _shown_later(self, event: dict[str, Any]) -> None:
        self._waiting.popleft()  # (the first waiting: due times only grow)
        self._fan_out(event)

    def _cut(self) -> None:
        for handle in self._waiting:
            handle.cancel()
        self._waiting.clear()

    def lines(self) -> list[tuple[str, str, str]]:
        """What seat pages sent since the last call, oldest first: (player, line,
        source), the source "tap" for a button tapped, "seat" for a typed line."""
        got: list[tuple[str, str, str]] = []
        while True:
            try:
                got.append(self._lines.get_nowait())
            except queue.Empty:
                return got

    def _remember(self, event: dict[str, Any]) -> None:
        if event["type"] == "state":
            self._state = event
        elif event.get("to") is not None:
            self._private[event["to"]].append(event)
        else:
            self._history.append(event)

    def _fan_out(self, event: dict[str, Any]) -> None:
        self._remember(event)
        for page, seat in list(self._pages.items()):
            if event.get("to") is not None and event["to"] != seat:
                continue
            if page.full():  # a page too slow to keep up loses its oldest events
                page.get_nowait()
            page.put_nowait(event)

    # --- the web application -------------------------------------------------------------
    def app(self) -> Any:
        """The web application: the screen, each seat's page, their events,
        a seat's moves, the page's own files (each route a method below)."""
        from starlette.applications import Starlette
        from starlette.routing import Route, WebSocketRoute

        @contextlib.asynccontextmanager
        async def lifespan(_: Any) -> AsyncIterator[None]:
            self._loop = asyncio.get_running_loop()
            yield

        routes = [
            Route("/", self._screen_page),
            Route("/state", self._state_now),
            Route("/events", self._screen_events),
            Route("/static/{name}", self._static),
            Route("/seat/{name}", self._seat_page),
            Route("/seat/{name}/events", self._seat_events),
            Route("/seat/{name}/say", self._seat_say, methods=["POST"]),
            WebSocketRoute("/seat/{name}/listen", self._seat_listen),
        ]
        return Starlette(routes=routes, lifespan=lifespan)

    # --- the routes ------------------------------------------------------------------------
    def _seat_of(self, request: HTTPConnection) -> Seat | Response:
        """The seat a request names, or the answer that refuses it (404: no
        such seat; 403: not its key)."""
        from starlette.responses import PlainTextResponse

        seats = {s.name: s for s in self.seats.values()}
        try:
            seat = seats[player_named(request.path_params["name"], tuple(seats))]
        except NoSuchPlayer:
            return PlainTextResponse("No such seat.", status_code=404)
        key = request.query_params.get("key", "")
        if not secrets.compare_digest(key.encode(), seat.key.encode()):
            return PlainTextResponse("This seat's page needs its key.", status_code=403)
        return seat

    async def _screen_page(self, request: Request) -> Response:
        from starlette.responses import HTMLResponse

        return HTMLResponse(_page("screen.html", self.title, None))

    async def _seat_page(self, request: Request) -> Response:
        from starlette.responses import HTMLResponse, Response

        seat = self._seat_of(request)
        if isinstance(seat, Response):
            return seat
        return HTMLResponse(_page("seat.html", self.title, seat, self.example))

    async def _static(self, request: Request) -> Response:
        from starlette.responses import PlainTextResponse, Response

        name = request.path_params["name"]
        if name not in FILES:
            return PlainTextResponse("Not found.", status_code=404)
        return Response(_file(name), media_type=FILES[name])

    def _stream(self, seat: str | None) -> Response:
        """A page's events: the last captions and the state first, then each as it comes."""
        from starlette.responses import StreamingResponse

        page: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=QUEUE)
        first = [*self._history, *(self._private[seat] if seat else [])]
        first.sort(key=lambda e: e["n"])
        if self._state is not None:
            first.append(self._state)
        self._pages[page] = seat

        async def events() -> AsyncIterator[str]:
            try:
                for event in first:
                    yield _sse(event)
                while True:
                    try:
                        event = await asyncio.wait_for(page.get(), timeout=15.0)
                    except TimeoutError:
                        yield ": still here\n\n"  # (keeps proxies from closing it)
                        continue
                    yield _sse(event)
            finally:
                self._pages.pop(page, None)

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})

    async def _screen_events(self, request: Request) -> Response:
        return self._stream(None)

    async def _seat_events(self, request: Request) -> Response:
        from starlette.responses import Response

        seat = self._seat_of(request)
        if isinstance(seat, Response):
            return seat
        return self._stream(seat.name)

    async def _seat_say(self, request: Request) -> Response:
        """A line a seat page sends: JSON ``{"text": ..., "tap": true|false}``."""
        from starlette.responses import JSONResponse, Response

        seat = self._seat_of(request)
        if isinstance(seat, Response):
            return seat
        try:
            data = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError):
            return JSONResponse({"error": "Send JSON: {\"text\": \"...\"}."}, status_code=400)
        text = data.get("text") if isinstance(data, dict) else None
        if not isinstance(text, str) or not text.strip():
            return JSONResponse({"error": "Say something: {\"text\": \"...\"}."},
                                status_code=400)
        if len(text) > MAX_LINE:
            return JSONResponse({"error": f"At most {MAX_LINE} characters, please."},
                                status_code=400)
        # A button tapped ("tap": true) or a line typed in the page's box.
        self._lines.put((seat.name, text, "tap" if data.get("tap") is True else "seat"))
        return JSONResponse({"ok": True})

    async def _seat_listen(self, websocket: WebSocket) -> None:
        """A seat page's microphone: refused before it opens (HTTP 403) without
        the seat's key; closed with the reason when the referee is not
        listening to voices."""
        from starlette.responses import Response

        seat = self._seat_of(websocket)
        if isinstance(seat, Response):
            await websocket.close(code=1008, reason="This seat needs its key.")
            return
        if self.phones is None:
            await websocket.accept()
            await websocket.close(code=1008, reason="The referee is not listening to "
                                  "voices in this game: type or tap instead.")
            return
        await self.phones.serve(seat.name, websocket)

    async def _state_now(self, request: Request) -> Response:
        from starlette.responses import JSONResponse

        return JSONResponse(self._state["state"] if self._state else {})


_COUNT = iter(range(1, 1 << 62))


def _event(output: Output) -> dict[str, Any] | None:
    """An output as the page gets it (None: not for the screen)."""
    event: dict[str, Any]
    match output:
        case Say(at=at, text=text, tone=tone, to=to):
            event = {"type": "say", "at": at, "text": text, "tone": str(tone), "to": to}
            if tone == Tone.PRIVATE and to is None:
                return None
        case Caption(at=at, who=who, text=text, source=source):
            event = {"type": "heard", "at": at, "who": who, "text": text, "source": source}
        case Snapshot(at=at, state=state):
            event = {"type": "state", "at": at, "state": state, "published": time.monotonic()}
        case _:
            return None
    event["n"] = next(_COUNT)
    return event


def _sse(event: dict[str, Any]) -> str:
    if "published" in event:  # a state: what is left of the turn now, as it is sent
        event = dict(event)
        deadline = event["state"].get("deadline")
        since = time.monotonic() - event.pop("published")
        if isinstance(deadline, int | float):
            event["left"] = round(max(0.0, deadline - event["at"] - since), 3)
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"


def _file(name: str) -> bytes:
    return resources.files("referee.screen").joinpath("static", name).read_bytes()


def _page(name: str, title: str, seat: Seat | None, example: str = "") -> str:
    """A page, with the game's title, the seat it is for and an example move
    filled in."""
    from html import escape

    text = _file(name).decode()
    config = {"seat": seat.name if seat else None, "key": seat.key if seat else None}
    return (text.replace("{{title}}", escape(title or "The referee"))
                .replace("{{example}}", escape(example or "what you would say", quote=True))
                .replace("{{seat}}", escape(seat.name if seat else ""))
                .replace("{{config}}", escape(json.dumps(config), quote=True)))
