"""The plug-in contract, proved with a game that exists only in the tests.

"Give" is played by three or more players: on your turn you give one of your
tokens to another player ("I give a token to Bob", "Bob, I give you a
token", or just "I give you a token" to whoever was last named). Whoever
runs out of tokens loses and the one with the most wins. Its rules, its
table side and its phrase file (``tests/give_phrases.toml``) live here; the
runtime is not changed for it: it is played by typed lines, by a timed
script through the command line, through the table loop, and resumed from
its log. With ``draws`` it starts with chance steps in a row (the first player
draws from the bank), which the runtime resolves through the game's ``draw``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from harness.brain import Drive
from referee import cli
from referee.engine.core import (
    Action,
    Chance,
    Event,
    Game,
    GameWon,
    IllegalAction,
    NotYourTurn,
    Outcome,
    Rules,
    TurnStarted,
)
from referee.gamelog import GameLog, read_log
from referee.games import GAMES
from referee.games.base import GameSpec, Intent, Options, SetupError, option, spoken_list
from referee.games.race65 import Race65Spec
from referee.protocol import Entry
from referee.session import Session
from referee.table import Reports, Table

HERE = Path(__file__).resolve().parent


# --- the rules (pure, as in referee/engine) ------------------------------------------------


@dataclass(frozen=True)
class Give(Action):
    by: str
    to: str


@dataclass(frozen=True)
class Draw(Action):
    """A chance outcome: ``player`` draws ``tokens`` from the bank."""

    player: str
    tokens: int


@dataclass(frozen=True)
class TokenDrawn(Event):
    player: str
    tokens: int


@dataclass(frozen=True)
class TokenGiven(Event):
    by: str
    to: str
    left: int


@dataclass(frozen=True)
class GiveState:
    players: tuple[str, ...]
    tokens: tuple[int, ...]
    turn: int = 0
    over: bool = False
    #: Draws from the bank still to come before play (chance steps in a row).
    draws: int = 0
    #: The table ended the game (no winner).
    stopped: bool = False


class GiveRules(Rules[GiveState]):
    name = "give"

    def __init__(self, tokens: int, draws: int = 0) -> None:
        self.tokens, self.draws = tokens, draws

    def initial_state(self, players: Sequence[str], at: float) -> GiveState:
        return GiveState(tuple(players), (self.tokens,) * len(players), draws=self.draws)

    def chance(self, state: GiveState) -> Chance | None:
        """Before play, the first player draws 1 to 3 tokens, ``draws`` times."""
        if state.draws == 0 or state.over:
            return None
        player = state.players[state.turn]
        return Chance("a draw", tuple((Draw(player, k), 1 / 3) for k in (1, 2, 3)))

    def players(self, state: GiveState) -> tuple[str, ...]:
        return state.players

    def current_player(self, state: GiveState) -> str | None:
        return None if state.over else state.players[state.turn]

    def legal_actions(self, state: GiveState) -> list[Action]:
        me = self.current_player(state)
        return [] if me is None else [Give(me, p) for p in state.players if p != me]

    def stopped(self, state: GiveState) -> GiveState:
        return replace(state, over=True, stopped=True)

    def play(self, state: GiveState, action: Action, at: float) -> tuple[GiveState, list[Event]]:
        if isinstance(action, Draw) and state.draws:
            tokens = list(state.tokens)
            tokens[state.turn] += action.tokens
            drawn = replace(state, tokens=tuple(tokens), draws=state.draws - 1)
            return drawn, [TokenDrawn(action.player, action.tokens)]
        if state.draws:
            raise IllegalAction("Wait for the draws.")
        if not isinstance(action, Give):
            raise IllegalAction("That is not a move in this game.")
        if action.by != self.current_player(state):
            raise NotYourTurn(f"It's {self.current_player(state)}'s turn.")
        if action.to == action.by or action.to not in state.players:
            raise IllegalAction("Give your token to somebody else.")
        tokens = list(state.tokens)
        tokens[state.players.index(action.by)] -= 1
        tokens[state.players.index(action.to)] += 1
        left = tokens[state.players.index(action.by)]
        nxt = replace(state, tokens=tuple(tokens), turn=(state.turn + 1) % len(state.players),
                      over=left == 0)
        events: list[Event] = [TokenGiven(action.by, action.to, left)]
        if nxt.over:
            events.append(GameWon(self._leaders(nxt)))
        else:
            events.append(TurnStarted(nxt.players[nxt.turn], 0, None))
        return nxt, events

    def _leaders(self, state: GiveState) -> tuple[str, ...]:
        most = max(state.tokens)
        return tuple(p for p, t in zip(state.players, state.tokens, strict=True) if t == most)

    def outcome(self, state: GiveState) -> Outcome | None:
        if state.stopped:
            return Outcome((), stopped=True)
        return Outcome(self._leaders(state)) if state.over else None

    def deadline(self, state: GiveState) -> float | None:
        return None

    def describe(self, action: Action) -> str:
        if isinstance(action, Draw):
            return f"{action.player} draws {action.tokens}"
        assert isinstance(action, Give)
        return f"{action.by} gives {action.to} a token"


# --- the table side (as in referee/games/<game>/) ----------------------------------------


@dataclass(frozen=True)
class GiveOptions(Options):
    tokens: int = option(2, "tokens each")
    draws: int = option(0, "draws from the bank before play")
    seed: int | None = option(None, "seed of the referee's bank")
    bank: str = option("referee", "who holds the bank", choices=("referee", "table"))


class GiveSpec(GameSpec):
    name = "give"
    aliases = ("give-a-token",)
    summary = "Give: hand your tokens round; whoever runs out ends the game"
    phrase_file = HERE / "give_phrases.toml"
    min_players = 3
    max_players = 5
    options_type = GiveOptions
    options: GiveOptions

    def __init__(self, players: Sequence[str], options: GiveOptions | None = None) -> None:
        super().__init__(players, options)
        self.rules = GiveRules(self.options.tokens, self.options.draws)
        self.random = random.Random(self.options.seed)

    def draw(self, chance: Chance, game: Game[Any]) -> Action | None:
        """The referee holds the bank (a seeded draw), or the table does (None)."""
        if self.options.bank == "table":
            return None
        return chance.outcomes[self.random.randrange(len(chance.outcomes))][0]

    def ask_chance(self, chance: Chance, game: Game[Any]) -> str:
        return f"{game.current_player()}, draw from the bank and tell me how many."

    def new_game(self, at: float) -> Game[Any]:
        return Game(self.rules, self.players, at)

    def opening(self, game: Game[Any]) -> str:
        return f"Give, with {spoken_list(game.players)}. {game.current_player()} starts."

    def action_for(self, intent: Intent, speaker: str, game: Game[Any]) -> Action:
        if intent.kind == "drew":
            if self.options.bank != "table":
                raise IllegalAction("I hold the bank in this game.")
            return Draw(speaker, int(intent["tokens"]))
        return Give(speaker, str(intent["to"]))

    def announce(self, event: Event, game: Game[Any]) -> str:
        if isinstance(event, TokenDrawn):
            return f"{event.player} draws {event.tokens}."
        if isinstance(event, TokenGiven):
            return f"{event.by} gives {event.to} a token; {event.by} has {event.left} left."
        if isinstance(event, TurnStarted):
            return f"{event.player}'s turn."
        if isinstance(event, GameWon):
            return f"{spoken_list(event.winners)} {'wins' if len(event.winners) == 1 else 'win'}!"
        return ""

    def answer(self, what: str, player: str | None, game: Game[Any], at: float) -> str:
        """Its own questions (the tokens); the base class answers the rest
        (whose turn, time, rules, help: :meth:`GameSpec.answer` lists them)."""
        state: GiveState = game.state
        if what in ("score", "leader"):
            counts = zip(state.players, state.tokens, strict=True)
            return " ".join(f"{p} has {t}." for p, t in counts)
        return super().answer(what, player, game, at)

    def final_state(self, game: Game[Any]) -> dict[str, Any]:
        state: GiveState = game.state
        outcome = game.outcome()
        return {"winner": list(outcome.winners) if outcome else None,
                "tokens": dict(zip(state.players, state.tokens, strict=True))}


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> type[GiveSpec]:
    """The test game in the registry, for as long as a test runs."""
    monkeypatch.setitem(GAMES, GiveSpec.name, GiveSpec)
    return GiveSpec


def give_session(players: Sequence[str] = ("Ann", "Bob", "Cy"), **options: Any) -> Drive:
    return Drive(GiveSpec(players, GiveOptions(**options)))


def said(session: Drive, line: str, speaker: str | None, at: float) -> list[str]:
    return [s.text for s in session.hear(line, speaker, at)]


# --- typed lines, and "you" at a table of three -----------------------------------------


def test_the_test_game_is_played_by_typed_lines_to_its_end():
    s = give_session()
    assert [x.text for x in s.start()] == ["Give, with Ann, Bob and Cy. Ann starts."]
    assert said(s, "I give a token to Bob", None, 1.0) == [
        "Ann gives Bob a token; Ann has 1 left.", "Bob's turn."]
    assert said(s, "give Ann a token", None, 2.0) == [
        "Bob gives Ann a token; Bob has 2 left.", "Cy's turn."]
    assert said(s, "what's the score", None, 3.0) == ["Ann has 2. Bob has 2. Cy has 2."]
    assert said(s, "Ann, I give you a token", None, 4.0)[0] == (
        "Cy gives Ann a token; Cy has 1 left.")
    assert said(s, "I give a token to Ann", "Bob", 5.0) == ["It's Ann's turn."]  # refused
    assert said(s, "give a token to Ann", None, 6.0) == ["Give your token to somebody else."]
    assert said(s, "I give a token to Cy", None, 7.0)[0] == "Ann gives Cy a token; Ann has 2 left."
    assert said(s, "give Cy a token", None, 8.0)[0] == "Bob gives Cy a token; Bob has 1 left."
    assert s.final == {"winner": None, "tokens": {"Ann": 2, "Bob": 1, "Cy": 3}}


def test_you_means_the_last_player_named_and_is_asked_about_otherwise():
    """With three players "you" is whoever was last named; before anyone was, the
    referee asks who, and nothing changes."""
    s = give_session()
    s.start()
    mark = s.mark()
    assert said(s, "I give you a token", None, 1.0) == [
        "Who do you mean, Bob or Cy? Please say it again with their name."]
    assert s.changed_since(mark) == []
    assert said(s, "what's Cy's score", None, 2.0) == ["Ann has 2. Bob has 2. Cy has 2."]
    assert said(s, "I give you a token", None, 3.0)[0] == "Ann gives Cy a token; Ann has 1 left."
    # Bob names Ann, then "you" is Ann
    assert said(s, "Ann, I give you a token", None, 4.0)[0] == (
        "Bob gives Ann a token; Bob has 1 left.")
    assert said(s, "you take a token", "Cy", 5.0)[0] == "Cy gives Ann a token; Cy has 2 left."
    # the last one named is the speaker herself: ask
    assert said(s, "I give you a token", "Ann", 6.0) == [
        "Who do you mean, Bob or Cy? Please say it again with their name."]


def test_with_two_players_you_is_simply_the_other_one():
    s = give_session(("Ann", "Bob", "Cy"))
    two = s.matcher.match("I give you a token", "Ann").intent
    assert two == Intent.of("give", to="$addressee")  # three players: resolved by the session
    from referee.speech.understanding.intents import IntentMatcher

    pair = IntentMatcher.for_phrases(GiveSpec.phrase_file, ["Ann", "Bob"])
    assert pair.match("I give you a token", "Ann").intent == Intent.of("give", to="Bob")


# --- the command line, the table loop and the log ----------------------------------------


def test_the_test_game_has_its_own_play_command(registered, tmp_path, capsys):
    script = tmp_path / "game.txt"
    script.write_text("[1] I give a token to Bob\n[2] Bob: give Cy a token\n"
                      "[3] Cy: Ann, I give you a token\n[4] Ann: give Bob a token\n"
                      "[5] Bob: give Cy a token\n[6] Cy: Bob, take a token\n"
                      "[7] Ann: give Cy a token\n")
    code = cli.main(["play", "give", "--players", "Ann", "Bob", "Cy", "--tokens", "2",
                     "--script", str(script), "--json"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert any(line.endswith("Ann gives Cy a token; Ann has 0 left.") for line in out)
    assert any(line.endswith("Bob and Cy win!") for line in out)
    assert json.loads(out[-1]) == {"winner": ["Bob", "Cy"], "tokens": {"Ann": 0, "Bob": 3, "Cy": 3}}
    assert cli.main(["play", "give", "--players", "Ann", "Bob", "--no-log"]) == 2
    assert "for 3 to 5 players" in capsys.readouterr().err


def test_the_test_game_through_the_table_loop_and_back_from_its_log(registered, tmp_path):
    log = GameLog(tmp_path / "give.jsonl", lambda text: None)
    from referee.records import GameHeader

    spec = GiveSpec(["Ann", "Bob", "Cy"], GiveOptions(tokens=3))
    log.write(GameHeader(game=spec.name, players=spec.players, options=spec.options.to_json()))
    session = Session(spec)
    shown: list[str] = []
    table = Table(session, reports=Reports(show=shown.append, record=log.write_all))
    table.start()
    table.hear_text("I give a token to Cy", None, 1.0)
    table.hear_text("Cy, I give you a token", "Bob", 2.0)
    table.hear_text("you take a token", "Cy", 3.0)  # Cy was named last by Bob: ask who
    table.hear_text("I give you a token", "Cy", 4.0)
    assert any("Who do you mean, Ann or Bob?" in line for line in shown)
    log.close()

    logged = read_log(tmp_path / "give.jsonl")
    spec_class = GAMES[logged.header.game]
    options = spec_class.options_type.from_json(logged.header.options)
    copy = Drive(spec_class(list(logged.header.players), options))
    copy.replay(logged.records)
    assert (copy.state, copy.final) == (table.state, table.final)
    assert copy.final["tokens"] == {"Ann": 2, "Bob": 2, "Cy": 5}


def test_a_game_can_start_with_chance_steps_in_a_row_and_a_log_repeats_them():
    """Three draws before play, one chance step after another, resolved by the
    runtime through the game's draw; a replay applies the logged outcomes even
    with another seed."""
    from referee.records import ChanceRecord

    records: list[Entry] = []
    spec = GiveSpec(["Ann", "Bob", "Cy"], GiveOptions(draws=3, seed=11))
    s = Drive(spec, record=records.append)
    opening, *draws = [x.text for x in s.start()]
    assert opening.startswith("Give, with Ann, Bob and Cy.")
    assert len(draws) == 3
    assert all(d.startswith("Ann draws ") for d in draws)
    logged = [r for r in records if isinstance(r, ChanceRecord)]
    assert [r.name for r in logged] == ["a draw"] * 3
    ann = s.final["tokens"]["Ann"]
    assert ann == 2 + sum(int(d.split()[2].rstrip(".")) for d in draws)
    assert said(s, "I give a token to Bob", None, 1.0)[0].startswith("Ann gives Bob a token")
    other = GiveSpec(["Ann", "Bob", "Cy"], GiveOptions(draws=3, seed=15))
    alone = Drive(other)
    alone.start()
    assert alone.final["tokens"]["Ann"] != ann  # seed 15 draws otherwise ...
    copy = Drive(GiveSpec(["Ann", "Bob", "Cy"], GiveOptions(draws=3, seed=15)))
    copy.replay(records)
    assert (copy.state, copy.final) == (s.state, s.final)  # ... but the log decides


def test_the_table_can_hold_the_bank_and_the_referee_waits_for_its_report():
    """Physical chance at the start: the referee asks for each draw in turn and
    waits; a move before the draws is refused; a resume repeats the reports."""

    records: list[Entry] = []
    s = Drive(GiveSpec(["Ann", "Bob", "Cy"], GiveOptions(draws=2, bank="table")),
                record=records.append)
    assert [x.text for x in s.start()] == [
        "Give, with Ann, Bob and Cy. Ann starts.",
        "Ann, draw from the bank and tell me how many."]
    assert s.changed_since(0) == []  # nothing was drawn for the table
    mark = s.mark()
    assert said(s, "I give a token to Bob", None, 1.0) == ["Wait for the draws."]
    assert said(s, "I drew 7 tokens", None, 1.5) == ["The bank gives 1 to 3 tokens, not 7."]
    assert s.changed_since(mark) == []
    assert said(s, "I drew 3 tokens", None, 2.0) == [
        "Ann draws 3.", "Ann, draw from the bank and tell me how many."]
    assert said(s, "repeat that", None, 2.5) == [
        "Ann draws 3.", "Ann, draw from the bank and tell me how many."]
    assert said(s, "I got 1", None, 3.0) == ["Ann draws 1."]
    assert s.changed_since(mark).count("EventRecord") == 2  # the two draws told
    assert s.final["tokens"]["Ann"] == 6
    copy = Drive(GiveSpec(["Ann", "Bob", "Cy"], GiveOptions(draws=2, bank="table")))
    copy.replay(records)
    assert (copy.state, copy.final) == (s.state, s.final)


def test_options_are_a_frozen_value_checked_however_they_are_made():
    assert GiveOptions(tokens=3).to_json() == {
        "first": None, "house": [], "verbosity": "normal", "tokens": 3, "draws": 0,
        "seed": None, "bank": "referee"}
    assert GiveOptions.from_json(GiveOptions(tokens=3).to_json()) == GiveOptions(tokens=3)
    with pytest.raises(SetupError, match="--bank takes referee or table, not 'mine'"):
        GiveOptions(bank="mine")
    with pytest.raises(SetupError, match="--tokens takes a whole number, not 'many'"):
        GiveOptions(tokens="many")  # type: ignore[arg-type]
    with pytest.raises(SetupError, match="no option 'colour'"):
        GiveOptions.from_json({"colour": "red"})
    with pytest.raises(SetupError, match=r"There is no player called Zed\. The players are"):
        GiveSpec(["Ann", "Bob", "Cy"], GiveOptions(first="Zed"))


@pytest.mark.slow
@pytest.mark.parametrize("phrase_file", ["count_phrases.toml", "give_phrases.toml"])
def test_a_game_the_adapter_never_learnt_is_heard_at_least_as_well_as_by_whisper_as_shipped(
    phrase_file,
):
    """A game added since the table's adapter was trained (here games of the
    tests only, never in any training): the referee hears it with Whisper as
    shipped, not with an adapter that pulls every sentence towards the four
    games (issue #63: "add one", "add two", "I add two", "I add three" said by
    eSpeak NG were all heard as nothing with it, 2 of 4 without)."""
    from referee.speech.hearing.recognizers import make_recognizer
    from referee.speech.listen import hear_audio
    from referee.speech.speaking.tts import EspeakVoice
    from referee.speech.understanding.intents import IntentMatcher
    from referee.speech.understanding.phrase_files import load_phrases

    phrases = load_phrases(Path(__file__).with_name(phrase_file), ("Ann", "Bob"))
    matcher = IntentMatcher(phrases, ("Ann", "Bob"))
    lines = {"count_phrases.toml": ["add one", "add two", "I add two", "I add three"],
             "give_phrases.toml": ["I give a token to Bob", "Bob, take a token",
                                   "I drew two tokens", "what's Bob's score"]}[phrase_file]
    voice = EspeakVoice()
    recordings = [voice.render(line) for line in lines]

    def heard_right(recognizer) -> int:
        right = 0
        for line, audio in zip(lines, recordings, strict=True):
            heard, _ = hear_audio(recognizer, matcher, audio, "Ann")
            right += heard.intent == matcher.match(line, "Ann").intent
        return right

    default = make_recognizer(phrases)
    assert getattr(default, "adapter", "?") is None  # (never trained on this game)
    base = make_recognizer(phrases, model="base")
    assert heard_right(default) >= heard_right(base) >= len(lines) // 2
    known = make_recognizer(load_phrases(Race65Spec.phrase_file, ("Ann", "Bob")))
    assert getattr(known, "adapter", None) is not None  # a game it was trained on keeps it


class PlainGiveSpec(GiveSpec):
    """Give, answering only with the base class's answers."""

    answer = GameSpec.answer


def test_the_worked_example_answers_its_own_questions_and_the_shared_ones():
    """Issue #83: the example left out ``super().answer``, so a new game built
    from it answered "rules" and "how much time is left" with the score."""
    s = give_session()
    s.start()
    assert said(s, "what's the score", "Bob", 1.0) == ["Ann has 2. Bob has 2. Cy has 2."]
    assert said(s, "what are the rules", "Bob", 2.0) == [
        "Give: hand your tokens round; whoever runs out ends the game."]
    assert said(s, "how much time is left", "Bob", 3.0) == ["There is no timer running."]
    assert said(s, "whose turn is it", "Bob", 4.0) == ["It's Ann's turn."]


def test_the_base_class_answers_the_questions_every_game_shares():
    """A new game answers turn, time, help, rules and the winner with no code
    of its own, and says it cannot answer what it does not know."""
    spec = PlainGiveSpec(["Ann", "Bob", "Cy"])
    s = Drive(spec)
    s.start()
    assert said(s, "whose turn is it", "Bob", 1.0) == ["It's Ann's turn."]
    assert said(s, "how much time is left", "Bob", 2.0) == ["There is no timer running."]
    assert said(s, "what are the rules", "Bob", 3.0) == [
        "Give: hand your tokens round; whoever runs out ends the game."]
    help_now = said(s, "help", "Bob", 4.0)[0]
    assert help_now.startswith("It's Ann's turn. Say, for example: I drew two tokens.")
    assert "help with moves" in help_now
    # No [help] list of moves in its phrase file: its examples are read out.
    assert said(s, "help with moves", "Bob", 4.5) == [
        "Moves: I give a token to Ann. I drew two tokens."]
    assert spec.answer("odds", None, spec.new_game(5.0), 5.0) == (
        "I cannot answer that in this game.")


@pytest.mark.slow
def test_the_training_draws_its_lines_from_every_registered_game(registered):
    """A game added to the registry is trained on with no other change (the
    training once listed the four games by name)."""
    from training.sentences import draw, training_games

    assert "give" in training_games()
    lines = draw(400, seed=7)
    assert {line.game for line in lines} >= {"give", "race65", "turn7"}
    give = [line for line in lines if line.game == "give" and line.kind == "command"]
    assert give


@pytest.mark.slow
def test_an_adapter_names_the_games_it_was_trained_on(tmp_path):
    """The shipped adapter's report names its four games; an adapter whose
    report names none is used for every game, as before reports named them;
    an average or a stack knows the games of its parts."""
    import numpy as np

    from referee.speech.hearing.adapter import ADAPTER, ADAPTER_SHA256, load, save

    shipped = load(ADAPTER, ADAPTER_SHA256)
    assert shipped.games == frozenset({"race65", "shut-the-box", "turn7", "phase10-twist"})
    with np.load(ADAPTER, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files if k != "report"}
    cases: list[tuple[dict[str, Any], set[str] | None]] = [
             ({}, None), ({"games": ["count"]}, {"count"}),
             ({"averaged": [{"report": {"games": ["a"]}}, {"report": {"games": ["b"]}}]},
              {"a", "b"}),
             ({"averaged": [{"report": {"games": ["a"]}}, {"report": {}}]}, None),
             ({"stacked_on": {"report": {"games": ["a"]}}}, {"a"})]
    for n, (report, games) in enumerate(cases):
        path = tmp_path / f"a{n}.npz"
        save(path, arrays, report)
        assert load(path).games == games, report
