"""``referee play`` (live and audio scripts), ``referee resume`` and ``referee replay``.

Set-up decisions, each said once on stderr so that stdout is the game itself:

* ``--input auto`` uses the microphone when PortAudio finds an input device,
  and otherwise says it falls back to typed lines. Typed lines always work,
  with or without a microphone.
* Live games speak with eSpeak NG through the speakers when there is an
  output device; without one, or when the voice cannot start, the referee
  says so and prints only. Audio scripts are silent unless ``--voice`` is
  given (``--voice wav:DIR`` renders every sentence into DIR).
* Live games keep a log in ``logs/`` unless ``--no-log``; scripted games only
  with ``--log FILE``.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.audioscript import AudioScript, script_problems
from referee.gamelog import LOGS_DIR, GameLog, LogInUse, announced, default_path, read_log
from referee.games import find_game
from referee.games.base import GameSpec, SetupError, plural
from referee.protocol import (
    INPUTS,
    Brain,
    Caption,
    Entry,
    Resume,
    Room,
    Say,
    Snapshot,
    Start,
    Stop,
    Tone,
)
from referee.protocol import Output as Shown
from referee.records import (
    DroppedRecord,
    GameHeader,
    InputRecord,
    LogError,
    SaidRecord,
)
from referee.replay import Rebuilt, rebuild_start, replay_records
from referee.satellites import (
    ON_SATELLITE,
    SatelliteOutput,
    SatelliteVoice,
    satellites_for,
    seat_satellites,
)
from referee.screen.setup import screen_for
from referee.session import Session
from referee.speech.audio import PlaybackTrack
from referee.speech.hearing.mic import parse_device
from referee.speech.speaking.tts import (
    NullOutput,
    Output,
    SilentVoice,
    SpeakerOutput,
    TeeOutput,
    Voice,
    VoiceError,
    WavDirOutput,
    make_voice,
    output_device_available,
)
from referee.speech.understanding.meaning import spoken_list
from referee.table import ECHO_TAIL, READING_WPM, Mouth, Reports, Table
from referee.told import emit, note, problem, take_problems

if TYPE_CHECKING:
    from referee.speech.hearing.mic import Microphone

MAX_SCRIPT_BYTES = 10_000_000


def voice_and_output(args: argparse.Namespace, live: bool) -> tuple[Voice, Output]:
    """The voice and where it goes, from ``--voice``; falls back to print-only
    with a note (or, with seat satellites to speak on, to them alone)."""
    name, directory = None, None
    for part in (args.voice or "").split(","):
        part = part.strip()
        if part.startswith("wav:"):
            directory = part[4:] or "."
        elif part:
            name = part
    if name is None:
        name = "espeak" if live or directory else "none"
    try:
        voice = make_voice(name, args.rate, args.volume)
    except VoiceError as error:
        if not live:
            raise SetupError(str(error)) from error
        note(f"{error} Printing only.")
        return SilentVoice(), NullOutput()
    if directory is not None:
        try:
            return voice, WavDirOutput(directory)
        except VoiceError as error:
            raise SetupError(str(error)) from error
    if name == "none" or not live:
        return voice, NullOutput()
    if not output_device_available():
        if getattr(args, "seat", None) and getattr(args, "satellite_voice", "all") != "none":
            note("No speaker found: the referee speaks on the seats' satellites only.")
            return voice, NullOutput()
        note("No speaker found: the referee prints what it says and does not speak.")
        return SilentVoice(), NullOutput()
    try:
        return voice, SpeakerOutput(parse_device(args.output_device), track=_echo_track(args))
    except VoiceError as error:
        note(f"{error} Printing only.")
        return SilentVoice(), NullOutput()


#: ``--private-audio Ann=screen``: Ann's private sentences go to her seat page only.
SEAT_PAGE = "screen"


def private_outputs(spec: GameSpec, live: bool) -> dict[str, Output]:
    """Each player's own output for what only they may hear (``--private-audio
    Ann=DEVICE``): a device, ``wav:DIR`` to write WAV files (recorded
    games), or ``screen``: their seat page alone (with ``--screen``; a seat
    page shows its player's private sentences whatever their device). A
    device that cannot be opened stops the game before it starts."""
    outputs: dict[str, Output] = {}
    for player, device in spec.private_channels().items():
        if device in (SEAT_PAGE, ON_SATELLITE):  # (a satellite's is set once it is up)
            outputs[player] = NullOutput()
        elif device.startswith("wav:"):
            try:
                outputs[player] = WavDirOutput(device[4:] or ".")
            except VoiceError as error:
                raise SetupError(f"{player}'s private audio: {error}") from error
        elif live:
            try:
                outputs[player] = SpeakerOutput(parse_device(device))
            except VoiceError as error:
                for output in outputs.values():
                    output.close()
                raise SetupError(f"{player}'s private audio, device {device!r}: {error}") \
                    from error
        else:
            outputs[player] = NullOutput()
    return outputs


def _recognizer(args: argparse.Namespace, spec: GameSpec) -> Any:
    """The table's ears; Moonshine that cannot hear here is said aloud and
    Whisper hears instead (``args.engine`` then says so, for the log's header)."""
    from referee.speech.hearing.interface import RecognizerError
    from referee.speech.hearing.recognizers import make_ears
    from referee.speech.understanding.phrase_files import load_phrases

    try:
        recognizer = make_ears(load_phrases(spec.phrase_file, spec.players), args.engine,
                               args.model, problem)
    except RecognizerError as error:
        raise SetupError(str(error)) from error
    if args.engine is not None and recognizer.name != args.engine:
        args.engine = recognizer.name
    return recognizer


def game_log_for(args: argparse.Namespace, spec: GameSpec, live: bool) -> GameLog | None:
    if args.no_log or (args.log is None and not live):
        return None
    try:
        path = args.log or default_path(spec.name)
    except LogError as error:
        problem(f"{error} The game goes on without a log.")
        return None
    game_log = _locked(path)
    if game_log.working:
        from referee.speech.hearing.recognizers import hearing_label

        game_log.write(GameHeader(game=spec.name, players=spec.named_players,
                                  options=spec.options.to_json(),
                                  started=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                                  hearing=hearing_label(args.engine, args.model,
                                                        spec.name)))
        note(f"game log: {path}")
    return game_log


def play_table(args: argparse.Namespace, spec: GameSpec) -> int:
    live = args.audio_script is None
    check_table_options(args)
    check_log_path(args)
    return _run(args, spec, Session(spec), lambda: game_log_for(args, spec, live), live=live)


def check_table_options(args: argparse.Namespace) -> None:
    """Options that go with another one, refused before anything starts: the
    pages' HTTPS (``--tls``, ``--tls-cert``) only serves a ``--screen``."""
    screen = getattr(args, "screen", None)
    for flag in ("tls", "tls_cert", "tls_key", "no_qr"):
        if getattr(args, flag, None) and not screen:
            name = "--" + flag.replace("_", "-")
            raise SetupError(f"{name} goes with --screen (the table's pages): add --screen "
                             f"PORT, or leave {name} out.")


def check_log_path(args: argparse.Namespace, resuming: Path | None = None) -> None:
    """``--log`` in a folder that does not exist is refused before anything starts
    (the referee creates only its own ``logs/`` folder), and so is a file that
    already holds a game (one log, one game: ``resume`` goes on with it)."""
    if args.log is None or args.no_log:
        return
    path = Path(args.log)
    if path.is_dir():
        raise SetupError(f"{path} is a folder: --log takes a file, as {path / 'game.jsonl'}.")
    if not path.parent.is_dir():
        raise SetupError(f"There is no folder {path.parent} for the game log.")
    same = resuming is not None and path.exists() and path.samefile(resuming)
    if not same and path.is_file() and path.stat().st_size > 0:
        raise SetupError(f"{path} already holds a game: to go on with it, say "
                         f"referee resume {path}; for a new game, choose another file.")


def _run(args: argparse.Namespace, spec: GameSpec, session: Brain,
         make_log: Callable[[], GameLog | None], *, live: bool,
         resuming: float | None = None) -> int:
    """Play to the end; ``resuming``: the game was rebuilt from its log, whose
    last record is at that time (where it stands is said instead of the opening). The
    game log is made by ``make_log`` once the voice and the microphone are
    ready, so a game that cannot start leaves no log behind."""
    on_seat_pages = [p for p, d in spec.private_channels().items() if d == SEAT_PAGE]
    if on_seat_pages and not (live and getattr(args, "screen", None)):
        raise SetupError(f"--private-audio {on_seat_pages[0]}=screen shows private sentences "
                         "on the player's seat page: play live with --screen too.")
    if not live:
        _check_audio_script(args.audio_script, spec)
    private = private_outputs(spec, live)
    voice, output = voice_and_output(args, live)
    game_log: GameLog | None = None
    table: Table | None = None
    try:
        if not live:
            script = AudioScript(read_lines(args.audio_script), args.audio_script.parent,
                                 end_silence=args.end_silence)
            recognizer = _recognizer(args, spec)
            game_log = make_log()
            table = Table(session, recognizer=recognizer,
                          mouth=Mouth(voice=voice, output=output, private=private,
                                      heard_back=script.heard_back),
                          reports=Reports(show=emit, record=_writer(game_log)))
            script.run(table)
        else:
            table, game_log = _run_live(args, spec, session, voice, output, make_log,
                                        resuming, private)
    finally:
        output.close()
        for channel in private.values():
            channel.close()
        if game_log is not None:
            game_log.close()
    if args.json and table is not None:  # (a line for each game of the evening)
        for final in table.results():
            print(json.dumps(final), flush=True)
    return 0


def _writer(game_log: GameLog | None) -> Callable[[Sequence[Entry]], None] | None:
    return None if game_log is None else game_log.write_all


def _run_live(args: argparse.Namespace, spec: GameSpec, session: Brain, voice: Voice,
              output: Output, make_log: Callable[[], GameLog | None], resuming: float | None,
              private: dict[str, Output]) -> tuple[Table, GameLog | None]:
    from referee.live import LiveLoop, library_noise_to

    track = output.track if isinstance(output, SpeakerOutput) else None
    satellites = satellites_for(args, spec)
    # The satellites' voice is the seats' echo reference where no speaker keeps one.
    satellite_track = _echo_track(args) if satellites and track is None else None
    microphone = _microphone(args, spec, track, seats_hear=bool(satellites))
    if microphone is None and sys.stdin.isatty():
        note("Type what you say, one line at a time; 'Bob: ...' says who spoke. "
             "After the game, that's all or Ctrl-D leaves.")
    with screen_for(args, spec, track or satellite_track) as screen, \
            seat_satellites(satellites, screen, spec, args,
                            track or satellite_track) as (phones, running):
        if running is not None:
            output = TeeOutput(output, SatelliteVoice(running, args.satellite_voice,
                                                      satellite_track))
            private = {player: SatelliteOutput(running, player) if device == ON_SATELLITE
                       else private[player]
                       for player, device in spec.private_channels().items()}
        hearing = microphone is not None or phones is not None
        recognizer = _recognizer(args, spec) if hearing else None
        game_log = make_log()
        table = Table(session, recognizer=recognizer,
                      mouth=Mouth(voice=voice, output=output, private=private,
                                  reading_wpm=READING_WPM),
                      room=Room(echo_tail=ECHO_TAIL,
                                cancels_echo=microphone is not None and track is not None),
                      reports=Reports(show=emit, stamp=False, record=_writer(game_log),
                                      screen=None if screen is None else screen.publish),
                      at=resuming or 0.0)
        # What went wrong while setting up is said too, not only printed.
        table.say([Say(table.now, text, Tone.PROBLEM) for text in take_problems()],
                  show=False)
        if resuming is not None:
            table.tell(Resume(resuming))
        loop = LiveLoop(table, microphone=microphone, keyboard=sys.stdin.buffer,
                        seat_lines=None if screen is None else screen.lines, phones=phones)
        with library_noise_to(library_log()):
            loop.run(greet=resuming is None)
            if not table.over:
                table.tell(Stop(loop.now()))
            # let the last sentence finish before the speakers close (their
            # library's complaints at closing go to its log too)
            time.sleep(max(0.0, min(5.0, table.busy_until - loop.now())))
            output.close()
    return table, game_log


def _microphone(args: argparse.Namespace, spec: GameSpec, track: PlaybackTrack | None,
                seats_hear: bool = False) -> Microphone | None:
    """The microphone the table asked for (``--input``, ``--device``,
    ``--seat-mics``), or None for typed input (said why, when it was not asked
    for). ``seats_hear``: the seats have satellites, so a table without a
    microphone of its own is not told to type (#83)."""
    from referee.options import parse_seats
    from referee.speech.hearing.mic import Microphone, MicrophoneError, input_device

    if args.input == "text":
        return None
    try:
        seats = parse_seats(args.seat_mics, spec.players)
    except ValueError as error:
        raise SetupError(str(error)) from error
    try:
        input_device(parse_device(args.device))
        return Microphone(parse_device(args.device), seats, args.end_silence, track=track)
    except MicrophoneError as error:
        # A device asked for by name or number is refused, not replaced by
        # typing: the table said which microphone to use.
        if args.input == "mic" or args.device is not None:
            raise SetupError(str(error)) from error
        if seats_hear:
            note("No microphone at the table: each player is heard through their satellite.")
            return None
        problem(f"{error} Falling back to typed input: type each move and press Enter.")
        return None


def _replay_on_screen(args: argparse.Namespace, spec: GameSpec,
                      records: Sequence[Entry]) -> int:
    """``referee replay LOG --screen``: the game again on the screen, a move
    every ``--pace`` seconds, or (``--pace 0`` at a terminal) a move each time
    Enter is pressed; the screen stays until Enter (or Ctrl-C)."""
    stepping = args.pace == 0 and sys.stdin.isatty()
    with screen_for(args, spec) as screen:
        assert screen is not None
        note("Replaying on the screen: " + ("Enter shows the next move" if stepping
             else f"a move every {args.pace:g} s") + "; Ctrl-C stops.")
        wait: Callable[[float], object] = (
            (lambda _: sys.stdin.readline()) if stepping else time.sleep)
        try:
            replay_to_screen(Session(spec), records, screen.publish, args.pace, wait)
            note("The replay is over; press Enter to close the screen.")
            if sys.stdin.isatty():
                sys.stdin.readline()
        except KeyboardInterrupt:
            note("Replay stopped.")
    return 0


def replay_to_screen(session: Brain, records: Sequence[Entry],
                     publish: Callable[[Shown], None], pace: float,
                     sleep: Callable[[float], object] = time.sleep) -> None:
    """Show a logged game on a screen as it went: what was said (from the log:
    exactly what was announced), who said what, and the board after each step
    (the game rebuilt input by input), ``pace`` seconds between moves."""
    made = session.step(rebuild_start(records, 0.0))
    for record in records:
        if isinstance(record, InputRecord):
            sleep(pace)
            publish(Caption(record.at, record.by or record.speaker or "someone", record.text,
                            record.source))
        elif isinstance(record, SaidRecord):
            publish(Say(record.at, record.text, Tone(record.kind), record.to))
        elif isinstance(record, INPUTS) and not isinstance(record, Start):
            made = session.step(record)
        for out in made:
            if isinstance(out, Snapshot):
                publish(out)
        made = []


def library_log() -> Path:
    """Where audio libraries' messages go during a live game (``logs/audio-library.log``)."""
    try:
        LOGS_DIR.mkdir(parents=True, exist_ok=True)
    except OSError:
        return Path(os.devnull)
    return LOGS_DIR / "audio-library.log"


def _echo_track(args: argparse.Namespace) -> PlaybackTrack | None:
    """Where the speakers keep what they play, for the microphone's echo
    canceller, when ``--echo-cancel`` is on (the default) and one is installed."""
    from referee.speech.hearing import echo

    if getattr(args, "echo_cancel", "on") != "on":
        return None
    if not echo.available():
        problem("No echo canceller (libspeexdsp is missing): speech over the referee's "
             "voice is not heard; scripts/setup.sh installs it.")
        return None
    return PlaybackTrack()


def _check_audio_script(path: Path, spec: GameSpec) -> None:
    """An audio script is checked whole before its game starts: SetupError
    listing every bad line."""
    problems = script_problems(read_lines(path), path.parent, tuple(spec.players))
    if problems:
        listed = "\n  ".join(problems)
        raise SetupError(f"The audio script {path} cannot be played as it is; fix these "
                         f"lines and run it again:\n  {listed}")


def read_lines(path: Path) -> list[str]:
    """A script's lines (typed or audio), or SetupError saying why not."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_SCRIPT_BYTES + 1)
    except OSError as error:
        raise SetupError(f"Cannot read the script {path}: {error.strerror or error}.") from error
    if len(data) > MAX_SCRIPT_BYTES:
        raise SetupError(f"The script {path} is larger than {MAX_SCRIPT_BYTES} bytes.")
    return data.decode("utf-8", errors="replace").splitlines()


# --- resume and replay -----------------------------------------------------------------


def _logged_session(path: Path, replaying: bool = False
                    ) -> tuple[GameSpec, Session, Rebuilt, list[Entry]]:
    """The game a log describes, rebuilt as it was last announced; what could
    not be rebuilt is told (resume: what to check on the table; a replay: what
    it leaves out)."""
    try:
        logged = read_log(path)
    except LogError as error:
        raise SetupError(str(error)) from error
    header = logged.header
    try:
        spec_class = find_game(header.game)
        spec = spec_class(list(header.players), spec_class.options_type.from_json(header.options))
    except (KeyError, TypeError) as error:
        raise SetupError(f"{path} does not describe a game the referee knows.") from error
    session = Session(spec)
    skipped = list(logged.skipped)
    records, unheard = announced(logged.records)
    if unheard:
        problem(f"{plural(unheard, 'input')} at the end of {path} had not been answered "
                "when the game stopped; the game goes on from the last announcement.")
    try:
        rebuilt = replay_records(session, records, converted=logged.converted)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        # The game's start did not take the log's chance: the log cannot be trusted.
        raise SetupError(f"{path} cannot be replayed: its chance outcomes do not fit the game "
                         f"({type(error).__name__}: {error}).") from error
    skipped += rebuilt.skipped
    middle = logged.damaged_lines[:-1] if logged.torn else logged.damaged_lines
    if middle:
        problem(f"{path}: {plural(len(middle), 'damaged line')} skipped "
                f"({'line' if len(middle) == 1 else 'lines'} {spoken_list(middle)}).")
    if logged.torn:
        problem(f"{path}: the last line was cut by a crash mid-write and was skipped.")
    for why in skipped:
        problem(f"{path}: skipped {why}.")
    lost = unrestored(records, rebuilt.records)
    if lost:
        told = "; ".join(f'"{r.text}" (line {logged.line_of(r)})' for r in lost[:5])
        more = f", and {len(lost) - 5} more" if len(lost) > 5 else ""
        then = ("The replay shows the log as written; the game rebuilt from it, its final "
                "state, lacks them." if replaying
                else "Check the table against what I say next.")
        problem(f"{path}: the game rebuilt from the rest is not what was announced. Not "
                f"restored: {told}{more}. {then}")
    return spec, session, rebuilt, records


def unrestored(logged: Sequence[Entry], rebuilt: Sequence[Entry]) -> list[SaidRecord]:
    """What the log says the referee announced that the game rebuilt from it
    did not announce again (a damaged or edited line lost a move), in order.

    What the game said as it started (the opening, and a deal: Turn 7's first
    cards) is not said again when a game is rebuilt, and the countdown is not
    a move, so neither counts.
    """
    def moves(records: Sequence[Entry]) -> list[SaidRecord]:
        return [r for r in records if isinstance(r, SaidRecord) and r.kind != "countdown"]

    said = moves(logged[_started(logged):])
    again = [r.text for r in moves(rebuilt)]
    matcher = difflib.SequenceMatcher(a=[r.text for r in said], b=again, autojunk=False)
    return [r for op, i1, i2, _, _ in matcher.get_opcodes() if op in ("delete", "replace")
            for r in said[i1:i2]]


def _started(records: Sequence[Entry]) -> int:
    """Where a log's start ends: its first records, all at the time the game
    began, before anyone said anything (the opening, a deal)."""
    begun = records[0].at if records else 0.0
    return next((i for i, r in enumerate(records)
                 if isinstance(r, InputRecord) or r.at > begun), len(records))


def _locked(path: Path) -> GameLog:
    """The game log at ``path``, locked for this referee; SetupError if another
    referee has it (two resumes of one game: the second changes nothing)."""
    try:
        return GameLog(path, problem)
    except LogInUse as error:
        raise SetupError(str(error)) from error


def cmd_resume(args: argparse.Namespace) -> int:
    check_table_options(args)
    check_log_path(args, resuming=args.log_file)
    if not args.log_file.is_file():  # (locking it would create it: an empty "game")
        raise SetupError(f"There is no game log {args.log_file}: resume takes the log of "
                         "a game that was played (logs/ keeps them).")
    # The log is locked before it is read: a second resume of the same game
    # stops here, before it reads, says or writes anything.
    held = _locked(args.log_file)
    elsewhere = args.log is not None and Path(args.log).resolve() != args.log_file.resolve()
    writing = None if elsewhere or args.no_log else held
    try:
        spec, session, rebuilt, _ = _logged_session(args.log_file)
        last = rebuilt.last
        if rebuilt.state.get("over"):
            raise SetupError(f"The game in {args.log_file} is over; there is nothing to resume.")
        if elsewhere and not args.no_log:
            writing = _locked(args.log)

        def make_log() -> GameLog | None:  # (the brain logs the resume: Resume)
            return None if args.no_log else writing

        return _run(args, spec, session, make_log, live=True, resuming=last)
    finally:
        held.close()
        if writing is not None:
            writing.close()


def cmd_replay(args: argparse.Namespace) -> int:
    spec, _, rebuilt, records = _logged_session(args.log_file, replaying=True)
    if getattr(args, "screen", None):
        return _replay_on_screen(args, spec, records)
    for r in records:
        at = f"[{r.at:.1f}]"
        if isinstance(r, InputRecord):
            print(f"{at} {r.speaker or r.by or '?'} ({r.source}): {r.text}")
        elif isinstance(r, SaidRecord) and r.to is not None:
            print(f"{at} referee, to {r.to} only: (private)")
        elif isinstance(r, SaidRecord):
            print(f"{at} referee: {r.text}")
        elif isinstance(r, DroppedRecord):
            print(f"{at} (not acted on, {r.reason}): {r.text}")
        elif isinstance(r, Stop):
            print(f"{at} (game stopped by the table)")
        elif isinstance(r, Resume):
            print(f"{at} (resumed)")
    if args.json:
        for final in rebuilt.games or (rebuilt.final,):
            print(json.dumps(final))
    return 0
