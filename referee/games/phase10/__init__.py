"""Phase 10 Twist at the table: the board (data), the Twist cards (physical or
virtual, said privately), intents to actions, what the referee says, and the
phase checker on the command line.

Decisions (also in ``docs/playing.md``):

* **The board is data.** The default (``board.txt`` beside this file) is the
  sequence of ``../shared/rules.md``, an assumption: the seed does not give
  the printed board. ``--board FILE`` loads another (or the spaces
  themselves: ``--board "1 2 T 3 ... 10"``); the game log keeps the spaces,
  so resume does not depend on the file.
* **Twist cards.** ``--twist physical`` (the default): the player draws a real
  card and keeps it secret; the referee records only that they took one, and
  checks the phase when they lay it down and say which card it is ("I lay
  down twist card four: ..."). ``--twist virtual``: the referee draws it,
  seeded like a virtual deck, and says it to that player alone on their own
  output device (``--private-audio Ann=DEVICE``: headphones); a player
  without one cannot take a virtual Twist card, and is told why.
* **A read-out is optional.** "I lay down my phase" is taken on the player's
  word; with the cards ("three fives and three sevens") the referee checks
  them and says what is wrong. Hits are checked when the group hit was read
  out.
* **The end of a hand.** Whoever has not said so is asked "did you make your
  phase?" (yes or no, or "I made it", "Bob didn't make it"); then every pawn
  moves and the new spaces and phases are said.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from referee.engine.core import (
    Action,
    Chance,
    Event,
    Game,
    GameWon,
    IllegalAction,
    Rejection,
)
from referee.engine.phase10 import (
    ChoiceNeeded,
    Choose,
    DrawTwist,
    GoOut,
    HandStarted,
    HitMade,
    HitOn,
    LayDown,
    Next,
    PawnsMoved,
    Phase10,
    Phase10Config,
    Phase10State,
    PhaseChosen,
    PhaseLaidDown,
    Points,
    PointsNeeded,
    PointsTold,
    Report,
    Reported,
    ReportNeeded,
    SkipOn,
    SkipPlayed,
    TurnPassed,
    TwistTaken,
    WentOut,
)
from referee.engine.phase10_phases import (
    BOARD_PHASES,
    TWIST_PHASES,
    Board,
    Card,
    hand_points,
    parse_board,
)
from referee.games.base import (
    GameSpec,
    Intent,
    Options,
    SetupError,
    Tool,
    option,
    parse_house_rules,
    spoken_list,
)
from referee.games.phase10.checker import check, check_arguments
from referee.games.phase10.readout import ReadoutError, counted, read_cards, spoken_cards
from referee.games.phase10.words import BoardWords, card_words, phase_words

BOARD_FILE = Path(__file__).with_name("board.txt")


def load_board(value: str | None) -> Board:
    """The board of ``--board``: a file, or the spaces themselves ("1 2 T 3 ... 10");
    the default file when None. Raises SetupError saying what is wrong."""
    path = BOARD_FILE if value is None else Path(value).expanduser()
    if value is not None and not path.is_file() and (" " in value or "," in value):
        text, where = value, "The board"
    else:
        try:
            text, where = path.read_text(encoding="utf-8"), f"The board file {path}"
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or "it is not a text file"
            raise SetupError(f"Cannot read the board file {path}: {reason}.") from error
    try:
        return parse_board(text)
    except ValueError as error:
        raise SetupError(f"{where}: {error}") from error


# --- options and the spec ------------------------------------------------------------------


@dataclass(frozen=True)
class Phase10Options(Options):
    board: str | None = option(None, "a board file (or its spaces, \"1 2 T 3 ... 10\"; "
                                     "default: referee/games/phase10/board.txt)", metavar="FILE")
    twist: str = option("physical", "Twist cards drawn by the players (physical) or by the "
                        "referee and said in the player's headphones (virtual)",
                        choices=("physical", "virtual"))
    private_audio: tuple[str, ...] = option(
        (), "a player's own output device for private sentences, e.g. Ann=2, "
            "Ann=wav:DIR, or Ann=screen: their seat page (with --screen) (repeatable)",
        metavar="NAME=DEVICE")
    turns: bool = option(False, "keep the order of turns and the Skips")
    seed: int | None = option(None, "seed for the virtual Twist cards")
    dealer: str | None = option(None, "who deals the first hand (default: the first named)",
                                metavar="NAME")


class Phase10Spec(GameSpec):
    name = "phase10-twist"
    phrase_file = Path(__file__).with_name("phrases.toml")
    aliases = ("phase10", "phase-10-twist", "phase-10")
    summary = "Phase 10 Twist: the referee keeps the board, the phases and the Twists"
    tools = (Tool("check", "check a laid-down phase of Phase 10 Twist", check_arguments,
                  check),)
    min_players = 2
    max_players = 6
    options_type = Phase10Options
    options: Phase10Options

    def __init__(self, players: Sequence[str], options: Phase10Options | None = None) -> None:
        super().__init__(players, options)
        # A tie on hand points is a shared win; the "replay" variant of
        # ../shared/rules.md (a deciding hand) is not built yet, and is refused.
        parse_house_rules(self.options.house, {"ties": ("share",)})
        self.board = load_board(self.options.board)
        self.channels = self._channels(self.options.private_audio)
        dealer = self.player_named(self.options.dealer) if self.options.dealer else None
        first = self.first_player()
        if dealer is None and first is not None:  # --first: the dealer sits before them
            dealer = self.players[(self.players.index(first) - 1) % len(self.players)]
        self.virtual = self.options.twist == "virtual"
        self.words = BoardWords(self.board, self.virtual)
        self.seed: int = (random.randrange(2**31) if self.options.seed is None
                          else self.options.seed)
        # The log keeps the spaces themselves and the seed: resume sets up the same game.
        self.options = replace(self.options, board=self.board.text(), seed=self.seed)
        self.config = Phase10Config(
            board=self.board, virtual_twist=self.virtual, turns=self.options.turns,
            dealer=0 if dealer is None else self.players.index(dealer))
        self.rules = Phase10(self.config)

    def _on_screen(self, player: str) -> bool:
        """Whether ``player``'s secrets go to their seat page (``NAME=screen``)."""
        return self.channels.get(player) == "screen"

    def _heard_in(self, player: str) -> str:
        """Where ``player`` hears what is for them alone: their satellite
        (``NAME=satellite``) or their headphones."""
        return ("on your satellite" if self.channels.get(player) == "satellite"
                else "in your headphones")

    def _look_or_listen(self, player: str) -> str:
        return ("look at your seat page" if self._on_screen(player)
                else f"listen {self._heard_in(player)}")

    def _secretly(self) -> str:
        """How the virtual Twist cards reach their players, as the opening says it."""
        ways = sorted({"show them on your seat page" if self._on_screen(p)
                       else f"say them {self._heard_in(p)}" for p in self.channels})
        return " or ".join(ways) or "say them in your headphones"

    def _channels(self, pairs: Sequence[str]) -> dict[str, str]:
        channels: dict[str, str] = {}
        for pair in pairs:
            name, _, device = pair.partition("=")
            if not device.strip():
                raise SetupError(f"--private-audio takes NAME=DEVICE, like Ann=2, not {pair!r}.")
            channels[self.player_named(name)] = device.strip()
        return channels

    def private_channels(self) -> dict[str, str]:
        return dict(self.channels)

    # --- set-up -------------------------------------------------------------------------------
    def new_game(self, at: float) -> Game[Phase10State]:
        return Game(self.rules, self.players, at)

    def opening(self, game: Game[Any]) -> str:
        state: Phase10State = game.state
        twist = (f"I draw Twist cards and {self._secretly()}" if self.virtual
                 else "you draw Twist cards from the holder and keep them secret")
        turns = " I keep the turns: say next when your turn is over." if self.config.turns \
            else ""
        start = " ".join(self.announce(e, game) for e in self.rules.start_events(state))
        return (f"Phase 10 Twist for {spoken_list(state.players)}, on a board of "
                f"{len(self.board.spaces)} spaces; {twist}.{turns} {start}")

    def reset(self, game: Game[Any]) -> str:
        twist = "" if self.virtual else ", put the Twist cards back in the holder"
        return (f"Everyone, put your pawns back at the start{twist}, "
                "and shuffle all the cards.")

    def unnamed(self, game: Game[Any]) -> str | None:
        """Without kept turns the referee waits for nobody in particular between
        reports: nothing tells whose an unnamed move or "where am I" is."""
        state: Phase10State = game.state
        if (self.config.turns or state.drawing or state.choosing or state.unreported
                or state.unscored):
            return game.current_player()
        return None

    def where_we_are(self, game: Game[Any], at: float) -> str:
        state: Phase10State = game.state
        return f"Hand {state.hand}. {self._whose(game)}"

    # --- intents to actions -----------------------------------------------------------------------
    def action_for(self, intent: Intent, speaker: str, game: Game[Any]) -> Action:
        state: Phase10State = game.state
        kind = intent.kind
        player = str(intent.get("player") or speaker)
        if kind == "laid":
            if state.stage == "report":
                return Report(player, True)
            twist = intent.get("twist")
            return LayDown(player, self._cards(intent), None if twist is None else int(twist))
        if kind == "failed":
            if state.stage != "report":
                raise IllegalAction("I ask who made their phase when the hand is over.")
            return Report(player, False)
        if kind == "answered":  # yes or no to "did you make your phase?"
            asked = game.current_player()
            if player != asked:
                raise IllegalAction(f"I asked {asked}. {self.words.report_question(state, asked)}")
            return Report(player, bool(intent["made"]))
        if kind == "hit":
            group = intent.get("group")
            return HitOn(speaker, str(intent["owner"]), self._cards(intent),
                         _GROUPS.get(str(group)) if group else None)
        if kind == "out":
            return GoOut(player)
        if kind == "choose":
            return self._choose(intent, speaker, state)
        if kind == "points":
            if intent.get("points") is not None:
                return Points(player, int(intent["points"]))
            return Points(player, hand_points(self._cards(intent)))
        if kind == "next":
            if not self.config.turns:
                raise IllegalAction("I am not keeping the turns in this game.")
            named = intent.get("player")
            return Next(speaker, None if named is None else str(named))
        if kind == "skip":
            if not self.config.turns:
                raise IllegalAction("I am not keeping the turns in this game: play your Skip.")
            return SkipOn(player, str(intent["target"]))
        raise ValueError(f"no action for intent {intent}")

    def describe_intent(self, intent: Intent) -> str:
        """The phrase file's description, with the cards read out as they were said
        ("Bob laid down the phase: 3 fives and 3 sevens")."""
        words = intent.get("cards")
        if intent.kind == "hit":
            said = " ".join(map(str, words or ()))
            group = intent.get("group") or "phase"
            return f"{intent['player']} hits {said} on {intent['owner']}'s {group}"
        text = super().describe_intent(intent)
        if words:
            text += ": " + " ".join(map(str, words))
        return text

    def likelier(self, intent: Intent, who: str, game: Game[Any], at: float) -> Intent | None:
        """A phase read out as "three five and three seven" (Whisper's way of
        writing "three fives and three sevens") that the rules refuse, while
        the counted reading makes the phase: that reading, to be asked about."""
        words = intent.get("cards")
        if intent.kind not in ("laid", "hit") or not words:
            return None
        again = counted(words)
        if again == tuple(words) or self._takes(intent, who, game, at):
            return None
        other = Intent.of(intent.kind, **{**dict(intent.slots), "cards": again})
        return other if self._takes(other, who, game, at) else None

    def _takes(self, intent: Intent, who: str, game: Game[Phase10State], at: float) -> bool:
        """Whether the rules take ``intent`` now (tried on the state, which stays as it is)."""
        try:
            game.rules.apply(game.state, self.action_for(intent, who, game), at)
        except Rejection:
            return False
        return True

    def confirmation(self, intent: Intent, who: str) -> str:
        """Hand points read out as cards are asked about as the points they make
        ("Ann, are 25 points left in your hand?"), not as the words heard."""
        if intent.kind == "laid" and intent.get("cards"):
            return f"{who}, did you lay down {spoken_cards(intent['cards'])}?"
        if intent.kind == "points" and intent.get("points") is None:
            words = intent.get("cards") or ()
            try:
                points = hand_points(read_cards(words))
            except ReadoutError:  # (refused when played: it says what is wrong)
                return f"{who}, are the cards left in your hand: {' '.join(map(str, words))}?"
            return f"{who}, are {points} points left in your hand?"
        return super().confirmation(intent, who)

    @staticmethod
    def _cards(intent: Intent) -> tuple[Card, ...]:
        words = intent.get("cards") or ()
        if not words:
            return ()
        try:
            return read_cards(words)
        except ReadoutError as error:
            raise IllegalAction(error.sentence) from error

    def _choose(self, intent: Intent, speaker: str, state: Phase10State) -> Action:
        choosing = state.choosing
        player = speaker if speaker in choosing else (choosing[0] if choosing else speaker)
        phase = intent.get("phase")
        if phase is None and self.virtual and player in choosing and player not in self.channels:
            low, high = self.words.neighbours(state, player)
            raise IllegalAction(
                f"{player}, I can only tell you a Twist card in your own headphones, and you "
                f"have none (start the game with --private-audio {player}=DEVICE, or "
                f"{player}=screen and --screen). Choose "
                f"phase {low} or phase {high}.")
        return Choose(player, None if phase is None else int(phase))

    def confirm_tap(self, intent: Intent) -> bool:
        """ "I'm out" tapped on a seat page is asked about first: it ends the hand."""
        return intent.kind == "out"

    def moves_now(self, game: Game[Any], player: str) -> list[str]:
        """During the hand: lay down their phase, then go out; on a Twist space:
        a neighbouring phase or a Twist card. A read-out of the cards, a hit
        and the end of the hand's reports are said or typed in words."""
        state: Phase10State = game.state
        if state.over:
            return []
        if state.stage == "choose" and player in state.choosing:
            low, high = self.words.neighbours(state, player)
            twist = not self.virtual or player in self.channels  # (a virtual card needs one)
            return [f"phase {low}", f"phase {high}", *(["twist card"] if twist else [])]
        if state.stage != "play" or (self.options.turns and game.current_player() != player):
            return []
        return ["I'm out"] if state.seat(player).laid else ["I laid down my phase"]

    def waiting_for(self, game: Game[Any], player: str) -> str | None:
        """A Twist space's choice: a yes or no does not say which."""
        state: Phase10State = game.state
        if state.over or state.stage != "choose" or player not in state.choosing:
            return None
        low, high = self.words.neighbours(state, player)
        return f"{player}, say phase {low}, phase {high}, or twist card."

    def answer_move(self, intent: Intent, speaker: str, game: Game[Any]) -> Intent | None:
        """ "yes" or "no" to "Bob, did you make your phase?"."""
        state: Phase10State = game.state
        if not state.unreported:
            return None
        player = str(intent.get("player") or speaker)
        return Intent.of("answered", made=intent["value"] == "yes", player=player)

    def draw(self, chance: Chance, game: Game[Any]) -> Action | None:
        """A virtual Twist card: seeded by the game's seed (:meth:`game_seed`: new
        for each game at the table), the hand and the player."""
        state: Phase10State = game.state
        cards = sorted(a.card for a, _ in chance.outcomes if isinstance(a, DrawTwist))
        player = str(state.drawing)
        seed = self.game_seed(self.seed)
        card = random.Random(f"phase10/{seed}/{state.hand}/{player}").choice(cards)
        return DrawTwist(player, card)

    def moments(self, game: Game[Any]) -> frozenset[str]:
        """ "choose" while a player on a Twist space chooses; "report" while the end
        of a hand asks who made their phase; "points" while hand points decide
        the winner; "turns" during play when the turns are kept."""
        state: Phase10State = game.state
        now = {"choose": state.stage == "choose", "report": state.stage == "report",
               "points": state.stage == "points",
               "turns": state.stage == "play" and self.config.turns}
        return frozenset(k for k, v in now.items() if v)

    # --- events to sentences ------------------------------------------------------------------
    def announce(self, event: Event, game: Game[Any]) -> str:
        state: Phase10State = game.state
        if isinstance(event, HandStarted):
            return self.words.hand(event)
        if isinstance(event, ChoiceNeeded):
            return self.words.choice_question(event.player, *event.neighbours)
        if isinstance(event, PhaseChosen):
            return f"{event.player} plays {phase_words(event.phase)}."
        if isinstance(event, TwistTaken):
            if event.card is None:
                return f"{event.player} takes a Twist card: keep it secret until you lay it down."
            return (f"{event.player} takes a Twist card. "
                    f"{event.player}, {self._look_or_listen(event.player)}.")
        if isinstance(event, PhaseLaidDown):
            return self.words.laid(event)
        if isinstance(event, HitMade):
            cards = spoken_list([card_words(c) for c in event.cards])
            onto = f": now {event.group.words()}" if event.group is not None else ""
            return f"{event.player} hits {cards} on {event.owner}'s phase{onto}."
        if isinstance(event, WentOut):
            return f"{event.player} went out! The hand is over."
        if isinstance(event, ReportNeeded):
            return self.words.report_question(state, event.player)
        if isinstance(event, Reported):
            return ""  # the end of the hand says every result
        if isinstance(event, PawnsMoved):
            return self.words.moves(event)
        if isinstance(event, PointsNeeded):
            return (f"{spoken_list(event.players)} passed Phase 10 in this hand, and none of "
                    f"them went out: the lowest hand wins. {event.players[0]}, how many points "
                    "are left in your hand? Say the points, or read me the cards.")
        if isinstance(event, PointsTold):
            left = state.unscored
            ask = f" {left[0]}, your points?" if left else ""
            return f"{event.player}: {event.points} points.{ask}"
        if isinstance(event, TurnPassed):
            skipped = (f"{spoken_list(event.skipped)} "
                       f"{'is' if len(event.skipped) == 1 else 'are'} skipped. "
                       if event.skipped else "")
            return f"{skipped}{event.player}'s turn."
        if isinstance(event, SkipPlayed):
            return f"{event.player} skips {event.target}."
        if isinstance(event, GameWon):
            return self.words.won(event, state)
        return ""

    def private(self, event: Event, game: Game[Any]) -> tuple[str, str] | None:
        """A virtual Twist card, to its holder alone."""
        if isinstance(event, TwistTaken) and event.card is not None:
            return event.player, self.words.secret(event.player, event.card)
        return None

    def answer_privately(self, intent: Intent, game: Game[Any]) -> tuple[str, str, str] | None:
        if intent.get("what") != "mytwist":
            return None
        state: Phase10State = game.state
        player = str(intent.get("player") or game.current_player())
        seat = state.seat(player)
        if not (self.virtual and seat.twist and seat.phase is not None
                and player in self.channels) or state.over:
            return None
        where = "on your seat page" if self._on_screen(player) else self._heard_in(player)
        return (f"{player}: {where}.", player, self.words.secret(player, seat.phase))

    # --- questions ---------------------------------------------------------------------------
    def answer(self, what: str, player: str | None, game: Game[Any], at: float) -> str:
        """``player`` None: the question did not say whose ("where am I" from
        someone unknown): where everyone stands, what everyone needs."""
        state: Phase10State = game.state
        if what in ("where", "score"):
            return self.words.standing(state) if player is None else self.words.where(state, player)
        if what == "need":
            if player is None and not state.over:
                return " ".join(self.words.need(state, p) for p in state.players)
            return self.words.need(state, player or self._asker(game))
        if what == "board":
            return self.words.read_board(state)
        if what == "leader":
            return self.words.leader(state)
        if what == "dealer":
            return f"{state.players[state.dealer]} deals hand {state.hand}."
        if what == "mytwist":
            if player is None:
                return "Whose Twist card? Please ask again with your name."
            return self.words.my_twist(state, player)
        if what == "theirtwist" and player is not None:
            return self.words.their_twist(state, player)
        if what == "turn":
            return self._whose(game)
        if what == "time":
            return "There is no timer in this game."
        if what == "help":
            return self._help(game)
        if what == "rules":
            return ("Phase 10 Twist. Each hand, make the phase of your space and lay it down; "
                    "then hit and go out. After the hand you move 3 spaces for going out, 2 for "
                    "making your phase, and 1 if not, except on the Phase 10 space. On a Twist "
                    "space choose a neighbouring phase or a Twist card: a Twist card doubles "
                    "your move, 4 or 6, but failing it moves you back 1. First past Phase 10 "
                    "wins.")
        return "I can tell you where everyone is, what phase you need, or read the board."

    def answer_question(self, intent: Intent, game: Game[Any], at: float) -> str:
        what = str(intent["what"])
        if what == "phase":
            number = int(intent["phase"])
            return f"Phase {number} is {BOARD_PHASES[number].words()}."
        if what == "twist":
            number = int(intent["twist"])
            return f"Twist card {number} is {TWIST_PHASES[number].words()}."
        return super().answer_question(intent, game, at)

    def _asker(self, game: Game[Any]) -> str:
        return game.current_player() or game.players[0]

    def _whose(self, game: Game[Any]) -> str:
        state: Phase10State = game.state
        if state.winners:
            return f"The game is over. {spoken_list(state.winners)} won."
        if state.stopped:
            return "The game was stopped."
        if state.choosing:
            player = state.choosing[0]
            return self.words.choice_question(player, *self.words.neighbours(state, player))
        if state.unreported:
            return self.words.report_question(state, state.unreported[0])
        if state.unscored:
            return f"{state.unscored[0]}, how many points are left in your hand?"
        if state.turn is not None:
            return f"It's {state.players[state.turn]}'s turn."
        first = state.order()[0]
        return (f"Hand {state.hand}: {state.players[state.dealer]} dealt, {first} plays first. "
                "Tell me when you lay down your phase, and who goes out.")

    def _help(self, game: Game[Any]) -> str:
        state: Phase10State = game.state
        if state.choosing:
            return "Say phase and its number, like phase two, or say twist card."
        if state.unreported:
            return "Say yes or no: did you make your phase?"
        if state.unscored:
            return ("Say your points, like forty five points, or read your cards: a wild and "
                    "a seven.")
        return ("Say I lay down my phase, with the cards if you like: three fives and three "
                "sevens. Say I hit a four on Bob's run, and I'm out when you go out.")

    def undone(self, before: Any, game: Game[Any]) -> str:
        return f"Undone. {self._whose(game)}"

    # --- final state -----------------------------------------------------------------------------
    def final_state(self, game: Game[Any]) -> dict[str, Any]:
        state: Phase10State = game.state
        players = {p: {"space": state.seat(p).space + 1,
                       "finished": state.seat(p).space > self.board.last,
                       "phase": self.words.phase_number(state.seat(p).space)}
                   for p in state.players}
        return {"winner": list(state.winners), "players": players,
                "hands": len(state.history), "board": self.board.text(),
                "turn": game.current_player()}

    def public_state(self, game: Game[Any]) -> dict[str, Any]:
        """The final state, and what is on the table this hand: the groups
        each player laid down (as read out), who made their phase, who is
        skipped, and who must still say whether they made it. A Twist card
        said in headphones stays private."""
        shown = self.final_state(game)
        state: Phase10State = game.state
        for player in state.players:
            seat = state.seat(player)
            shown["players"][player] |= {"laid": seat.laid,
                                         "groups": [g.words() for g in seat.groups],
                                         "made": seat.made, "skipped": seat.skipped}
        shown["to_report"] = list(state.unreported)
        return shown


#: The group a hit names, as the engine knows it.
_GROUPS = {"run": "run", "set": "set", "colour": "colour", "color": "colour",
           "colours": "colour", "colors": "colour", "cards": "colour"}
