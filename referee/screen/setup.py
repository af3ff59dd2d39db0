"""The table's screen set up for a game (``--screen``, ``--tls``): started,
its addresses printed (QR codes for phones), stopped with the game."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from referee.games.base import GameSpec, SetupError
from referee.screen.server import Screen
from referee.speech.audio import PlaybackTrack
from referee.told import note, problem


@contextlib.contextmanager
def screen_for(args: argparse.Namespace, spec: GameSpec,
               track: PlaybackTrack | None = None) -> Iterator[Screen | None]:
    """The table's screen while the game runs, when ``--screen`` asks for one
    (a SetupError before the game starts when it cannot listen there);
    ``track``: what the speakers play, for the phones' echo cancellers."""
    if not getattr(args, "screen", None):
        yield None
        return
    from referee.screen.phones import PhoneSeats
    from referee.screen.server import ScreenError, parse_address
    from referee.screen.tls import FIRST_VISIT

    try:
        host, port = parse_address(args.screen)
        # The seat pages are microphones too, when the referee listens to voices.
        phones = (None if getattr(args, "input", "text") == "text"
                  else PhoneSeats(list(spec.players), getattr(args, "end_silence", 0.25),
                                  track=track))
        screen = Screen(spec.players, host, port, title=spec.title,
                        example=spec.example(), phones=phones, tls=_tls(args, host))
        screen.start()
    except ScreenError as error:
        raise SetupError(str(error)) from error
    try:
        show_addresses(screen, qr=not getattr(args, "no_qr", False))
        if screen.tls is not None and not getattr(args, "tls_cert", None) and not screen.local:
            problem(FIRST_VISIT)
        yield screen
    finally:
        screen.stop()


def _tls(args: argparse.Namespace, host: str) -> tuple[Path, Path] | None:
    """The certificate and key the screen serves HTTPS with (``--tls``), or None."""
    cert, key = getattr(args, "tls_cert", None), getattr(args, "tls_key", None)
    if not getattr(args, "tls", False) and not cert and not key:
        return None
    from referee.screen.server import lan_addresses
    from referee.screen.tls import TLSError, checked_pair, own_certificate

    try:
        if cert or key:
            if not (cert and key):
                raise SetupError("--tls-cert and --tls-key go together: give both.")
            return checked_pair(Path(cert), Path(key))
        return own_certificate(lan_addresses() if host in ("0.0.0.0", "::", "") else [host],
                               told=problem)
    except TLSError as error:
        raise SetupError(str(error)) from error


def show_addresses(screen: Screen, qr: bool = True) -> None:
    """The screen's address and each seat's; with a QR code each for phones
    only where a phone can open them (not on a loopback address: there a QR
    code is only some 60 lines a screen reader reads out), and ``qr``."""
    import segno

    codes = qr and not screen.local

    def code(url: str) -> None:
        if codes:
            segno.make(url).terminal(out=sys.stderr, compact=True)

    others = screen.urls[1:]
    also = f" (also {', '.join(others)})" if others else ""
    note(f"the table's screen: {screen.url}{also}")
    code(screen.url)
    for player in screen.seats:
        note(f"{player}'s seat page (keep it to {player}): {screen.seat_url(player)}")
        code(screen.seat_url(player))
    if screen.local:
        note("only this machine can open these pages; --screen 0.0.0.0:PORT opens them "
             "to phones at the table.")
    else:
        address = screen.url.partition("://")[2].rstrip("/").replace(":", ", port ")
        problem(f"The screen is open to this network at {address}; each player's page is "
                "printed with its key.")
