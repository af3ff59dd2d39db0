"""What the referee needs to know about a game besides its rules.

A game plugs into the referee with two things: its pure rules, a module in
:mod:`referee.engine`, and a folder here (``referee/games/<game>/``) holding
its :class:`GameSpec` (options, intents to actions, events to sentences,
answers, policy: what to confirm, what needs another player's agreement,
what may interrupt the referee, extra commands) and its phrase file. The
registry (:data:`referee.games.GAMES`) lists the games. The runtime
(:mod:`referee.session`, :mod:`referee.table`, the command line) knows
nothing else about any game; ``tests/test_layers.py`` checks it.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from referee.engine.core import Action, Chance, Event, Game, Rejection
from referee.games.options import (
    COMMAND_NAME_SCORE,
    Options,
    SetupError,
    Tool,
    check_players,
    option,
    parse_house_rules,
)
from referee.games.words import plural, sentence
from referee.speech.understanding.meaning import Intent, Wording, render, spoken_list
from referee.speech.understanding.phrase_files import load_wording
from referee.wording import NoSuchPlayer, player_named

__all__ = ["COMMAND_NAME_SCORE", "GameSpec", "Intent", "Options", "SetupError", "Tool",
           "check_players", "option", "parse_house_rules", "plural", "sentence", "spoken_list"]


class GameCore(ABC):
    """What every game provides: its name and phrase file, and five methods
    (a sixth, :meth:`answer`, has a default for the questions every game shares).
    Everything else a game may do is optional, in the groups below, each with
    defaults that fit a game without that capability."""

    #: Name on the command line and of the phrase file.
    name: ClassVar[str]
    #: What to say of an option the game does not have, by its name, where the
    #: game has it another way (Race to 65's timer comes with its difficulty).
    option_hints: ClassVar[dict[str, str]] = {}
    #: What players can say: the game folder's ``phrases.toml`` (see
    #: :mod:`referee.speech.understanding.templates`).
    phrase_file: ClassVar[Path]
    #: The players, in the order they were named.
    players: tuple[str, ...]

    @abstractmethod
    def new_game(self, at: float) -> Game[Any]:
        """A fresh game whose first turn starts ``at``."""

    @abstractmethod
    def action_for(self, intent: Intent, speaker: str, game: Game[Any]) -> Action:
        """The engine action a move intent stands for (may raise a Rejection)."""

    @abstractmethod
    def announce(self, event: Event, game: Game[Any]) -> str:
        """The sentence the referee says for an event ('' for none)."""

    def answer(self, what: str, player: str | None, game: Game[Any], at: float) -> str:
        """The answer to a question; ``player``: whom it is about (None: not
        said, or everyone). ``what`` is the ``what`` of a ``query`` intent:
        those of ``common.toml``, which every game gets, are "turn" (whose
        turn), "time" (what is left of it), "leader" (who is ahead), "score"
        (a player's or, with ``player`` None, everyone's), "help" (what to do
        now: :meth:`TalkDefaults.help` adds the topics) and "rules"; a game's phrase
        file may add its own ("board", "odds", "mytwist"). This default
        answers the general ones from what every game has (the turn, the
        clock, the winners, the summary, the phrase file's examples) and says
        it cannot answer the rest: a game overrides it for its own state and
        calls it for the others (``super().answer(...)``)."""
        outcome = game.outcome()
        if what == "turn":
            if outcome is not None:
                won = spoken_list(list(outcome.winners)) if outcome.winners else "nobody"
                return f"The game is over: {won} won."
            now = game.current_player()
            return f"It's {now}'s turn." if now else "It's nobody's turn just now."
        if what == "time":
            deadline = game.deadline()
            if deadline is None:
                return "There is no timer running."
            return f"{max(0.0, deadline - at):.0f} seconds left."
        if what in ("leader", "score") and outcome is not None:
            won = spoken_list(list(outcome.winners)) if outcome.winners else "Nobody"
            return f"{won} won."
        if what == "help":
            now = game.current_player()
            turn = f"It's {now}'s turn." if now and outcome is None else ""
            example = self.example()
            return f"{turn} Say, for example: {example}.".strip() if example != "..." else turn
        if what == "rules":
            title, _, rest = str(getattr(type(self), "summary", "")).partition(":")
            return sentence(f"{title}: {rest.strip()}" if rest else title or self.name) + "."
        return "I cannot answer that in this game."

    @abstractmethod
    def opening(self, game: Game[Any]) -> str:
        """What the referee says when the game begins."""

    @abstractmethod
    def final_state(self, game: Game[Any]) -> dict[str, Any]:
        """The game's state as JSON (``--json``)."""

    @classmethod
    def example(cls) -> str:
        """A move of the game as players say it ("hit", "roll the dice"): the
        phrase file's first ``examples`` entry without a name in it (help
        texts and the seat page's text box show it)."""
        import tomllib

        try:
            data = tomllib.loads(cls.phrase_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return "..."
        return next((str(e) for e in data.get("examples", []) if "{" not in str(e)), "...")

    @property
    def wording(self) -> Wording:
        """The phrase file's ``[describe]`` and ``[confirm]`` tables."""
        return load_wording(self.phrase_file)


class TalkDefaults(GameCore):
    """Optional: how the game talks beyond its events and questions
    (:class:`~referee.games.contract.Talk`)."""

    #: Help topics in the order "help" names them, with their spoken titles.
    HELP_TOPICS: ClassVar[dict[str, str]] = {
        "moves": "Moves", "questions": "Questions, any time", "table": "For the table"}

    def answer_question(self, intent: Intent, game: Game[Any], at: float) -> str:
        """The answer to a question intent; a game whose questions carry more
        than a player ("is my seven up": a tile) reads the rest here. Who won
        (``winner``, and ``leader`` once the game is over) is answered here for
        every game, from its outcome."""
        what, outcome = str(intent["what"]), game.outcome()
        if what in ("winner", "leader") and outcome is not None:
            won = spoken_list(list(outcome.winners)) if outcome.winners else "Nobody"
            return f"{won} won."
        if what == "winner":
            return "Nobody has won yet. " + self.answer("leader", None, game, at)
        return self.answer(what, intent.get("player"), game, at)

    def help(self, topic: str | None, game: Game[Any], player: str | None, at: float) -> str:
        """Spoken help: without a topic, what to do now (:meth:`answer` "help")
        and the topics; with one, every command of that topic, from the phrase
        files' ``[help]`` lists (filled by :meth:`help_values`)."""
        if topic is None or topic not in self.wording.help:
            topics = [f"help with {'the table' if t == 'table' else t}"
                      for t in self.HELP_TOPICS if t in self.wording.help]
            listed = spoken_list(topics).replace(" and ", " or ")
            return f"{self.answer('help', player, game, at)} For every command, say {listed}."
        values = self.help_values(game, player)
        examples = " ".join(f"{sentence(render(e, values))}." for e in self.wording.help[topic])
        return f"{self.HELP_TOPICS.get(topic, sentence(topic))}: {examples}"

    def help_values(self, game: Game[Any], player: str | None) -> dict[str, Any]:
        """What fills the help examples: ``{other}``, a player other than ``player``."""
        others = [p for p in game.players if p != player]
        return {"other": (others or list(game.players))[0]}

    def describe_intent(self, intent: Intent) -> str:
        """A short phrase for an intent ("flip Bob's 7"), used to ask about
        ambiguous ones and to confirm: the phrase file's ``[describe]``."""
        return self.wording.describe(intent)

    @property
    def title(self) -> str:
        """The game's name as the table's screen heads it: the summary's
        (``summary``, before its colon); a game whose name depends on its
        options says so ("Race to 67")."""
        return str(getattr(type(self), "summary", "")).partition(":")[0] or self.name

    def public_state(self, game: Game[Any]) -> dict[str, Any]:
        """What everyone at the table may see of the game now, as JSON (the
        table's screen draws it): by default the final state (``--json``); a
        game adds what is on the table mid-round (cards in a row, the roll)."""
        return self.final_state(game)

    def moves_now(self, game: Game[Any], player: str) -> list[str]:
        """Sentences of the phrase file that ``player`` could say now to make a
        move the rules allow (a seat page shows them as buttons, for players
        who do not speak); [] when the game offers none (the page's text box
        still takes any sentence)."""
        return []

    def unnamed(self, game: Game[Any]) -> str | None:
        """Whose an utterance is when nothing says who spoke: the player the game
        waits for (whose turn it is); None when it waits for nobody in
        particular (the session then asks who, or answers for everyone)."""
        return game.current_player()

    def moments(self, game: Game[Any]) -> frozenset[str]:
        """The moments the game is at now, for the phrase file's ``when``: the
        sentences that can only be said at a moment (Turn 7's bare names, when
        an action card waits for its target) are listened for only then."""
        return frozenset()

    def reset(self, game: Game[Any]) -> str:
        """What the players put back on the real table before a new game
        ("Everyone, flip all your tiles back up."); '' when there is nothing
        to put back (the referee held the dice or the cards)."""
        return ""

    def where_we_are(self, game: Game[Any], at: float) -> str:
        """What the table needs to hear to pick the game up again (on resume)."""
        return self.answer("turn", None, game, at)

    def undone(self, before: Any, game: Game[Any]) -> str:
        """What to say after an undo took the game from state ``before`` back."""
        return "Undone."


class PolicyDefaults(GameCore):
    """Optional: what is asked about before it is played, and what may interrupt
    the referee (the defaults: nothing but ending the game needs asking)."""

    def always_confirm(self, intent: Intent) -> bool:
        """Whether a spoken move is confirmed even when it was heard surely
        (a move whose mistake would cost too much). Typed moves never are."""
        return False

    def confirm_tap(self, intent: Intent) -> bool:
        """Whether a move sent from a seat page (most often one tap) is asked
        about before it is played: a move that ends the player's turn, round
        or hand, or the game, is (one tap is easily a slip); the default, the
        moves :meth:`always_confirm` holds."""
        return self.always_confirm(intent)

    def confirmation(self, intent: Intent, who: str) -> str:
        """The question that confirms a move ``who`` made before it is played:
        the phrase file's ``[confirm]``, else "Ann, did you say: <description>?"."""
        return self.wording.confirm(intent, who)

    def likelier(self, intent: Intent, who: str, game: Game[Any], at: float) -> Intent | None:
        """Another reading of the words heard that the rules take where they
        refuse ``intent`` (Phase 10: "three five and three seven", as a
        recogniser writes "three fives and three sevens"), to be asked about
        before it is played; None when there is none (the default)."""
        return None

    def expects(self, intent: Intent, who: str, game: Game[Any], at: float) -> bool:
        """Whether the rules take this move from ``who`` now without a penalty:
        what the referee expects of the player it waits for, and hears more
        readily from them (:mod:`referee.speech.hearing.decision`). The
        default tries the move on the state as it stands (nothing changes)
        and takes any it does not refuse; a game whose rules answer some
        moves with a penalty rather than a refusal says which
        (:meth:`penalised`)."""
        try:
            action = self.action_for(intent, who, game)
            _, events = game.rules.apply(game.state, action, at)
        except (Rejection, ValueError):
            return False
        return not self.penalised(events)

    def penalised(self, events: Sequence[Event]) -> bool:
        """Whether a move that led to these events was penalised (a turn lost,
        a wrong call): no move the referee expects (:meth:`expects`)."""
        return False

    def agreement(self, intent: Intent) -> str | None:
        """What another player must agree to before an intent is carried out
        ("end the game"), or None when it needs nobody's agreement. Undo is
        always agreed (the session names the move)."""
        return "end the game" if intent.kind == "end" else None

    def answer_move(self, intent: Intent, speaker: str, game: Game[Any]) -> Intent | None:
        """A yes or no that answers the game's own question (Phase 10 Twist: "Bob,
        did you make your phase?"), as the move it stands for; None when the
        game asks nothing (the answer is then ignored, as table talk)."""
        return None

    def waiting_for(self, game: Game[Any], player: str) -> str | None:
        """What the game itself asked ``player`` and waits for, when that is no
        yes or no (Phase 10 Twist's Twist space: "phase 2, phase 3, or a Twist
        card?"): said to a yes or a no, which cannot answer it ("Say phase 2,
        phase 3, or twist card."); None when it waits for nothing such."""
        return None

    def barge_in(self, intent: Intent) -> bool:
        """Whether an intent may interrupt the referee while it is speaking."""
        return intent.kind == "stop" or (intent.kind == "query" and intent.get("what") == "repeat")


class ChanceDefaults(GameCore):
    """Optional: who resolves the game's chance steps (its dice, its deck): the
    referee (virtual) or the table (physical, the default)."""

    def draw(self, chance: Chance, game: Game[Any]) -> Action | None:
        """Resolve a chance step the game waits for (a roll, a draw, a deal):
        the outcome to apply when the referee holds the dice or the deck
        (virtual), or None when the table resolves it (physical: the players
        report what came, and the game's phrases turn that into the outcome)."""
        return None

    #: Games begun at this table, the one in play counted (:meth:`GameSpec.begin`).
    games_begun: int = 0

    def game_seed(self, seed: int) -> int:
        """The seed of the game in play, from the table's ``seed``: the seed
        itself for the first game, a new one drawn from it for each game after
        ("play again" deals new cards and rolls new dice; a log replays them,
        for its rematches are begun again in the same order).

        >>> class Table:
        ...     games_begun = 1
        ...     game_seed = ChanceDefaults.game_seed
        >>> spec = Table(); first = spec.game_seed(7)
        >>> spec.games_begun = 2; second = spec.game_seed(7)
        >>> first, second != first, spec.game_seed(7) == second
        (7, True, True)
        """
        if self.games_begun <= 1:
            return seed
        return random.Random(f"{seed}/game/{self.games_begun}").randrange(2**31)

    def ask_chance(self, chance: Chance, game: Game[Any]) -> str:
        """What the referee says when the table must resolve a chance step
        itself (physical dice or cards: :meth:`draw` returned None), to ask for
        the report; '' when the game's announcements already ask (Shut the
        Box's "Ann's turn: roll and tell me what you rolled")."""
        return ""


class PrivacyDefaults(GameCore):
    """Optional: sentences for one player's ears only (their own headphones)."""

    def private(self, event: Event, game: Game[Any]) -> tuple[str, str] | None:
        """What to say about an event to one player alone, on their own output
        device (``(player, sentence)``: Phase 10 Twist's virtual Twist card), or None."""
        return None

    def answer_privately(self, intent: Intent, game: Game[Any]) -> tuple[str, str, str] | None:
        """A question whose answer is one player's secret ("what is my Twist card"):
        ``(said aloud, player, said to them alone)``, or None for an ordinary answer."""
        return None

    def private_channels(self) -> dict[str, str]:
        """Each player's own output device (headphones) for private sentences."""
        return {}


class GameSpec(TalkDefaults, PolicyDefaults, ChanceDefaults, PrivacyDefaults):
    """One game as the referee sees it, set up for a table: its players and
    options, the game's required part (:class:`GameCore`), and defaults for
    every optional capability of the contract the brain types against
    (:class:`~referee.games.contract.Contract`)."""

    #: Other names accepted on the command line.
    aliases: ClassVar[tuple[str, ...]] = ()
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 2
    #: The game's options (``referee play GAME --help``; kept in the game log for resume).
    options_type: ClassVar[type[Options]] = Options
    #: One line for ``referee play --help``.
    summary: ClassVar[str] = ""
    #: Extra commands of the game (``referee hint shut-the-box ...``).
    tools: ClassVar[tuple[Tool, ...]] = ()

    def __init__(self, players: Sequence[str], options: Options | None = None) -> None:
        self.players = check_players(players, self.min_players, self.max_players)
        #: The players as they were named: what the game log keeps, so that a
        #: game whose order of play is drawn (Shut the Box's order roll) is set
        #: up again exactly, the same draw reordering the same names.
        self.named_players = tuple(self.players)
        self._refuse_command_names()
        if options is None:
            options = self.options_type()
        if not isinstance(options, self.options_type):
            raise TypeError(f"{self.name} takes {self.options_type.__name__}, "
                            f"not {type(options).__name__}")
        #: The options the game was set up with; the game log keeps them
        #: (``to_json``), so that they set the same game up again.
        self.options = options
        #: "brief" drops what players can see for themselves (times, flips left).
        self.brief = options.verbosity == "brief"
        self.first_player()  # an unknown name is refused whatever the game

    def begin(self, at: float) -> Game[Any]:
        """A new game at this table (the first, or "play again"): counted in
        :attr:`games_begun`, so that its chance is its own (:meth:`game_seed`)."""
        self.games_begun += 1
        return self.new_game(at)

    def _refuse_command_names(self) -> None:
        """A name that is a whole command of the game ("Stop", "Help", "Yes",
        "Hint") would shadow the command, and one that is a word of its phrases
        ("A" in Phase 10 Twist's read-outs, "Turn" in Race to 65) would take
        that word from every sentence: both refused."""
        from referee.speech.understanding.intents import IntentMatcher

        commands = IntentMatcher.for_phrases(self.phrase_file, ())
        for name in self.players:
            heard = commands.match(name, name)
            if heard.kind != "none" and heard.score >= COMMAND_NAME_SCORE:
                raise SetupError(f"{name!r} is also something players say to the referee "
                                 f"({self.describe_intent(heard.intent)}); please choose "
                                 "another name.")
            word = commands.phrases.said_word(name)
            if word is not None:
                title = commands.phrases.title or self.name
                raise SetupError(f"{name!r} is a word of {title}'s commands (\"{word}\"): a "
                                 "player called so would be heard in every sentence with it. "
                                 "Please choose another name, or a longer form of it.")

    def first_player(self) -> str | None:
        """The player ``--first`` names, as written at the table (None if not given)."""
        return None if self.options.first is None else self.player_named(self.options.first)

    def player_named(self, name: str) -> str:
        """The player an option names (``--first``, ``--dealer``), as written at the
        table; raises :class:`SetupError` for a name nobody has."""
        try:
            return player_named(name, self.players)
        except NoSuchPlayer as error:
            raise SetupError(str(error)) from None
