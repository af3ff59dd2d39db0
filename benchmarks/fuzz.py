"""Random utterances and typed lines through every game's session: 0 exceptions.

    ./run bench fuzz [--lines 100000] [--seed 1]

Each line is one of: a sentence of the game's phrase file, mutated (words
dropped, swapped or repeated; digits replaced by other scripts' digits),
random Unicode (any plane, control characters, lone
surrogates as a broken decoder leaves them), random bytes decoded as the
keyboard reader decodes them, an overlong line, or white space. Speakers are
the players, None (not known) or a name not at the table. A finished game is
replaced by a new one. Prints, per game: lines, exceptions, the lines that
moved the game (as a driver sees it: the step logged an event of the game or a
chance draw), and the time per line.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import random
import time
import traceback
from collections.abc import Iterator

from referee.games import GAMES
from referee.protocol import Brain, Logged, Start, Typed
from referee.records import ChanceRecord, EventRecord
from referee.report import Report
from referee.session import Session
from referee.speech.understanding.phrase_files import load_phrases
from referee.speech.understanding.templates import expand_sentences
from training.progress import Bar

PLAYERS = ("Ann", "Bob", "Cy")
#: Digits of other scripts a line may use instead of ASCII ones.
DIGITS = (
    "".join(chr(0x660 + i) for i in range(10)),  # Arabic-Indic
    "".join(chr(0xFF10 + i) for i in range(10)),  # full-width
    "".join(chr(0x966 + i) for i in range(10)),  # Devanagari
    "\u24ea" + "".join(chr(0x2460 + i) for i in range(9)),  # circled
    "\u2070\u00b9\u00b2\u00b3" + "".join(chr(0x2074 + i) for i in range(6)),  # superscript
)


def players_for(game: str) -> tuple[str, ...]:
    spec = GAMES[game]
    return PLAYERS[: max(spec.min_players, min(spec.max_players, 2))]


def sentences(game: str) -> list[str]:
    """A few sentences of each template of the game's phrase file."""
    spec = GAMES[game]
    phrases = load_phrases(spec.phrase_file, players_for(game))
    out: list[str] = []
    for template in phrases.intents:
        for expansion in template.expansions:
            for unrolled in phrases.unroll(expansion)[:3]:
                for i, (words, _) in enumerate(expand_sentences(phrases, unrolled)):
                    if i >= 4:
                        break
                    out.append(words)
    return out


def _mutate(rng: random.Random, text: str) -> str:
    words = text.split()
    for _ in range(rng.randrange(3)):
        if not words:
            break
        i = rng.randrange(len(words))
        choice = rng.random()
        if choice < 0.3:
            del words[i]
        elif choice < 0.6:
            j = rng.randrange(len(words))
            words[i], words[j] = words[j], words[i]
        else:
            words.insert(i, words[i])
    line = " ".join(words)
    if rng.random() < 0.3:
        digits = rng.choice(DIGITS)
        line = "".join(digits[int(c)] if c.isascii() and c.isdigit() else c for c in line)
    return line


def _unicode(rng: random.Random, length: int) -> str:
    pieces = []
    for _ in range(length):
        plane = rng.random()
        if plane < 0.5:
            pieces.append(chr(rng.randrange(0, 0x250)))
        elif plane < 0.8:
            pieces.append(chr(rng.randrange(0x250, 0x10000)))
        else:
            pieces.append(chr(rng.randrange(0x10000, 0x110000)))
    return "".join(pieces)


def lines(rng: random.Random, commands: list[str]) -> Iterator[str]:
    """Endless fuzz lines for one game."""
    while True:
        kind = rng.random()
        if kind < 0.45:
            yield _mutate(rng, rng.choice(commands))
        elif kind < 0.55:
            yield rng.choice(commands)
        elif kind < 0.75:
            yield _unicode(rng, rng.randrange(1, 40))
        elif kind < 0.9:
            data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60)))
            yield data.decode("utf-8", errors=rng.choice(["replace", "surrogateescape"]))
        elif kind < 0.95:
            yield rng.choice(commands) * rng.randrange(20, 400)
        else:
            yield rng.choice(["", " ", "\t", "\x00", "\r\n", "\x1b[2J", "\u200b", "\ufeff"])


@contextlib.contextmanager
def caught_errors() -> Iterator[list[str]]:
    """The tracebacks of the steps that failed meanwhile (a session reports a
    failed step, logs it and goes on: the game must not end on a bug)."""
    errors: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.exc_info:
                errors.append("".join(traceback.format_exception(*record.exc_info)))

    keep = Keep(logging.ERROR)
    logger = logging.getLogger("referee.session")
    logger.addHandler(keep)
    try:
        yield errors
    finally:
        logger.removeHandler(keep)


def fuzz(game: str, count: int, seed: int) -> tuple[int, list[str], int, list[float]]:
    """Feed ``count`` lines to sessions of ``game``: (lines, failures, moves, seconds)."""
    rng = random.Random(f"{game}/{seed}")
    players = players_for(game)
    speakers: list[str | None] = [*players, None, "Zed"]
    spec_class = GAMES[game]
    brain: Brain = Session(spec_class(players))
    report = Report().folded(brain.step(Start(0.0)))
    failures: list[str] = []
    moves = 0
    times: list[float] = []
    at = 0.0
    bar = Bar(count, f"{game}: lines")
    for n, line in zip(range(count), lines(rng, sentences(game)), strict=False):
        bar(n)
        at += rng.choice([0.1, 0.5, 1.0, 3.0, 20.0])
        start = time.perf_counter()
        with caught_errors() as errors:  # the one thing this benchmark looks for
            out = brain.step(Typed(at, line, rng.choice(speakers)))
        failures += [f"{game}: {line!r}\n{error}" for error in errors]
        times.append(time.perf_counter() - start)
        report = report.folded(out)
        moves += any(isinstance(o, Logged) and isinstance(o.record, EventRecord | ChanceRecord)
                     for o in out)  # (a step that moved the game: a move, a draw, a timeout)
        if report.over:
            brain = Session(spec_class(players), at=at)
            report = Report().folded(brain.step(Start(at)))
    bar.close()
    return count, failures, moves, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000, help="lines per game")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"`./run bench fuzz --lines {args.lines} --seed {args.seed}`\n")
    print("| game | lines | exceptions | lines that moved the game | per line p50 | p99 |")
    print("|---|---:|---:|---:|---:|---:|")
    failed: list[str] = []
    for game in GAMES:
        count, failures, moves, times = fuzz(game, args.lines, args.seed)
        times.sort()
        p50, p99 = times[len(times) // 2], times[int(len(times) * 0.99)]
        print(f"| {game} | {count} | {len(failures)} | {moves} | {p50 * 1000:.2f} ms | "
              f"{p99 * 1000:.2f} ms |", flush=True)
        failed += failures
    for failure in failed[:5]:
        print(failure)
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
