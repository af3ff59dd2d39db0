"""Phase 10 Twist: the board, the pawns, the phases and the Twists, as pure
functions of an immutable state.

The cards stay physical and the hands private: the referee keeps what the
table finds hard to keep (from ``../shared/seeds/phase-10-twist-excerpt.txt``
and ``../shared/rules.md``):

* **A hand.** The dealer deals (the seat after the last dealer each hand).
  Each player must make the phase of their space; a player on a Twist space
  first chooses (:class:`Choose`) one of the two neighbouring phases or a
  Twist card. A Twist card is physical (the player draws it and keeps it
  secret: the referee only records that they took one) or virtual (a chance
  step: the referee draws it, :class:`DrawTwist`).
* **During the hand**: a player lays down their phase (:class:`LayDown`,
  checked against the phase when the cards are read out), hits on a laid-down
  group (:class:`HitOn`, only after their own phase is down, checked when the
  group was read out), and goes out (:class:`GoOut`), which ends the hand.
* **At the end**: every player whose result is not known yet reports whether
  they completed their phase (:class:`Report`); then every pawn moves
  (:func:`movement`): went out 3, completed 2, otherwise 1 (not on the Phase
  10 space); a Twist card doubles (6, 4) or, failed, moves back 1.
* **Winning**: the first pawn past Phase 10. Several in one hand: the one who
  went out; else the lowest hand points (:class:`Points`: each is asked);
  still tied, a shared win.
* **Turns** (optional, ``turns=True``): :class:`Next` passes the turn (or names
  who plays), :class:`SkipOn` discards a Skip on a player, who loses their
  next turn (at most one Skip waits on a player). With turns kept, laying
  down, hitting and going out are only for the player whose turn it is.

Decisions where the texts are silent (also in ``docs/rules.md``): the Twist
holder has the ten Twist cards, one each, and a card comes back to it at the
end of the hand; a player who goes out without having said they laid down is
taken to have laid their phase down; a doubled Twist move that carries a pawn
past the Phase 10 space finishes, like the 2- and 3-space moves the rules
allow from the two spaces before it (which skip the Phase 10 space even where
2 spaces would land on it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from referee.engine.core import (
    Action,
    Chance,
    Event,
    GameWon,
    IllegalAction,
    NotYourTurn,
    Outcome,
    OutOfRange,
    Rules,
    UnknownPlayer,
    describe_table_action,
)
from referee.engine.phase10_phases import (
    BOARD_PHASES,
    DEFAULT_BOARD,
    TWIST_PHASES,
    Board,
    Card,
    Laid,
    Phase,
    check_phase,
)

Stage = Literal["choose", "play", "report", "points", "over"]
Result = Literal["out", "made", "failed"]
#: Spaces moved for each result: a board or neighbouring phase, and a Twist card.
STEPS: dict[Result, int] = {"out": 3, "made": 2, "failed": 1}
TWIST_STEPS: dict[Result, int] = {"out": 6, "made": 4, "failed": -1}


def movement(board: Board, space: int, result: Result, twist: bool) -> int:
    """The space a pawn on ``space`` moves to after a hand (``board.last + 1``:
    past the Phase 10 space, finished).

    The seed: "You may skip over the 10th Phase space by earning a 2 or
    3-space move from one of the two preceding spaces": from either of them,
    any move of 2 spaces or more finishes (from the second space before it, 2
    spaces would otherwise land on it).

    >>> board = DEFAULT_BOARD
    >>> movement(board, board.last, "failed", False), movement(board, board.last - 2, "made", False)
    (13, 14)
    """
    if space >= board.last and not twist:
        return board.last + 1 if result != "failed" else board.last
    steps = (TWIST_STEPS if twist else STEPS)[result]
    if steps >= 2 and board.last - 2 <= space < board.last:
        return board.last + 1
    return max(0, min(board.last + 1, space + steps))


# --- state ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seat:
    """A player's pawn, and what they do this hand."""

    space: int = 0
    #: The phase to make this hand (None: a Twist space not chosen yet, or a
    #: physical Twist card the referee has not been told).
    phase: Phase | None = None
    #: The player took a Twist card this hand (its phase, if known, is ``phase``).
    twist: bool = False
    laid: bool = False
    #: The groups of their laid-down phase, when it was read out (for hits).
    groups: tuple[Laid, ...] = ()
    #: After the hand: completed the phase (None: not reported yet).
    made: bool | None = None
    #: Hand points, when asked for at the end of the game.
    points: int | None = None
    #: A Skip waits on the player: they lose their next turn.
    skipped: bool = False


@dataclass(frozen=True)
class HandResult:
    player: str
    result: Result
    twist: bool
    space: int
    to: int


@dataclass(frozen=True)
class Phase10State:
    players: tuple[str, ...]
    board: Board
    seats: tuple[Seat, ...]
    hand: int
    dealer: int
    stage: Stage
    #: Who went out this hand.
    out: str | None = None
    #: Whose turn it is, when turns are kept.
    turn: int | None = None
    #: A virtual Twist card is being drawn for this player (a chance step).
    drawing: str | None = None
    #: Each finished hand's pawn moves.
    history: tuple[tuple[HandResult, ...], ...] = ()
    #: Players past Phase 10 whose hand points decide the winner.
    deciding: tuple[str, ...] = ()
    winners: tuple[str, ...] = ()
    stopped: bool = False

    @property
    def over(self) -> bool:
        return bool(self.winners) or self.stopped

    def seat(self, player: str) -> Seat:
        return self.seats[self.players.index(player)]

    def with_seat(self, player: str, **changes: object) -> Phase10State:
        i = self.players.index(player)
        seats = list(self.seats)
        seats[i] = replace(seats[i], **changes)  # type: ignore[arg-type]
        return replace(self, seats=tuple(seats))

    def order(self) -> tuple[str, ...]:
        """The players from the dealer's left, the dealer last."""
        n = len(self.players)
        return tuple(self.players[(self.dealer + 1 + k) % n] for k in range(n))

    @property
    def choosing(self) -> tuple[str, ...]:
        """Players on a Twist space who have not chosen yet, in order of play."""
        if self.stage != "choose":
            return ()
        return tuple(p for p in self.order() if self.on_twist(p) and self.seat(p).phase is None
                     and not self.seat(p).twist)

    @property
    def unreported(self) -> tuple[str, ...]:
        """At the end of a hand, who has not said whether they completed their phase."""
        if self.stage != "report":
            return ()
        start = self.players.index(self.out) if self.out else self.dealer
        n = len(self.players)
        around = [self.players[(start + k) % n] for k in range(n)]
        return tuple(p for p in around if self.seat(p).made is None)

    @property
    def unscored(self) -> tuple[str, ...]:
        return tuple(p for p in self.deciding if self.seat(p).points is None)

    def on_twist(self, player: str) -> bool:
        space = self.seat(player).space
        return space <= self.board.last and self.board.spaces[space] is None


# --- actions ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Choose(Action):
    """On a Twist space: one of the neighbouring phases, or (``phase`` None) a Twist card."""

    player: str
    phase: int | None


@dataclass(frozen=True)
class DrawTwist(Action):
    """The virtual Twist card drawn for a player (a chance step's outcome)."""

    player: str
    card: int


@dataclass(frozen=True)
class LayDown(Action):
    """A player lays down their phase; ``cards`` when read out (checked);
    ``twist`` the Twist card's number when a physical one is revealed."""

    player: str
    cards: tuple[Card, ...] = ()
    twist: int | None = None


@dataclass(frozen=True)
class HitOn(Action):
    """``player`` hits ``cards`` on a group of ``owner``'s phase (``group``: its
    kind, "set", "run" or "colour", when said)."""

    player: str
    owner: str
    cards: tuple[Card, ...]
    group: str | None = None


@dataclass(frozen=True)
class GoOut(Action):
    player: str


@dataclass(frozen=True)
class Report(Action):
    """At the end of a hand: whether ``player`` completed their phase."""

    player: str
    made: bool


@dataclass(frozen=True)
class Points(Action):
    """A finisher's hand points, to decide between several past Phase 10."""

    player: str
    points: int


@dataclass(frozen=True)
class Next(Action):
    """The turn passes on (``player`` None: to the next one in order)."""

    by: str
    player: str | None = None


@dataclass(frozen=True)
class SkipOn(Action):
    """``player`` discards a Skip on ``target``: their turn ends, and ``target``
    loses their next one."""

    player: str
    target: str


# --- events -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class HandStarted(Event):
    hand: int
    dealer: str
    #: Each player's phase this hand (None: on a Twist space, to choose).
    phases: tuple[tuple[str, Phase | None], ...]


@dataclass(frozen=True)
class ChoiceNeeded(Event):
    player: str
    neighbours: tuple[int, int]


@dataclass(frozen=True)
class PhaseChosen(Event):
    player: str
    phase: Phase


@dataclass(frozen=True)
class TwistTaken(Event):
    """A player took a Twist card; ``card`` is its phase when the referee drew it
    (said privately to the player only)."""

    player: str
    card: Phase | None


@dataclass(frozen=True)
class PhaseLaidDown(Event):
    player: str
    phase: Phase | None
    #: The cards were read out and checked.
    checked: bool


@dataclass(frozen=True)
class HitMade(Event):
    player: str
    owner: str
    cards: tuple[Card, ...]
    #: The group hit, when the referee knows it (after the hit).
    group: Laid | None


@dataclass(frozen=True)
class WentOut(Event):
    player: str


@dataclass(frozen=True)
class ReportNeeded(Event):
    player: str
    twist: bool


@dataclass(frozen=True)
class Reported(Event):
    player: str
    made: bool


@dataclass(frozen=True)
class PawnsMoved(Event):
    hand: int
    moves: tuple[HandResult, ...]


@dataclass(frozen=True)
class PointsNeeded(Event):
    players: tuple[str, ...]


@dataclass(frozen=True)
class PointsTold(Event):
    player: str
    points: int


@dataclass(frozen=True)
class TurnPassed(Event):
    player: str
    #: Players passed over because a Skip waited on them.
    skipped: tuple[str, ...]


@dataclass(frozen=True)
class SkipPlayed(Event):
    player: str
    target: str


# --- the rules --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Phase10Config:
    board: Board = DEFAULT_BOARD
    #: The Twist cards are drawn by the referee (a chance step) or physical.
    virtual_twist: bool = False
    turns: bool = False
    #: The first hand's dealer (a seat).
    dealer: int = 0


class Phase10(Rules[Phase10State]):
    name = "phase10-twist"

    def __init__(self, config: Phase10Config | None = None) -> None:
        self.config = config or Phase10Config()

    # contract ---------------------------------------------------------------------------------
    def initial_state(self, players: Sequence[str], at: float) -> Phase10State:
        names = tuple(players)
        if not 2 <= len(names) <= 6:
            raise ValueError("Phase 10 Twist is for 2 to 6 players")
        if len({n.casefold() for n in names}) != len(names):
            raise ValueError("every player needs a different name")
        state = Phase10State(names, self.config.board, (Seat(),) * len(names), hand=0,
                             dealer=(self.config.dealer - 1) % len(names), stage="over")
        state, _ = self._deal(state)
        return state

    def start_events(self, state: Phase10State) -> list[Event]:
        """What the first hand's start says (the opening)."""
        return self._hand_events(state)

    def players(self, state: Phase10State) -> tuple[str, ...]:
        return state.players

    def current_player(self, state: Phase10State) -> str | None:
        """Whom the referee waits for: a chooser, a reporter, a points-teller, the
        player whose turn it is (turns kept); else the dealer's left."""
        if state.over:
            return None
        if state.drawing:
            return state.drawing
        waiting = state.choosing or state.unreported or state.unscored
        if waiting:
            return waiting[0]
        if state.turn is not None:
            return state.players[state.turn]
        return state.order()[0]

    def outcome(self, state: Phase10State) -> Outcome | None:
        if state.winners:
            return Outcome(state.winners)
        if state.stopped:
            return Outcome((), stopped=True)
        return None

    def deadline(self, state: Phase10State) -> float | None:
        return None

    def chance(self, state: Phase10State) -> Chance | None:
        """A virtual Twist card being drawn: each card not held this hand, equally likely."""
        if state.drawing is None:
            return None
        cards = self.free_twists(state)
        return Chance(f"{state.drawing}'s Twist card",
                      tuple((DrawTwist(state.drawing, c), 1 / len(cards)) for c in cards))

    @staticmethod
    def free_twists(state: Phase10State) -> tuple[int, ...]:
        """The Twist cards in the holder (those held this hand are out of it)."""
        held = {s.phase.number for s in state.seats
                if s.twist and s.phase is not None and s.phase.twist}
        return tuple(n for n in TWIST_PHASES if n not in held)

    def legal_actions(self, state: Phase10State) -> list[Action]:
        if state.over:
            return []
        chance = self.chance(state)
        if chance is not None:
            return [a for a, _ in chance.outcomes]
        if state.stage == "choose":
            actions: list[Action] = []
            for p in state.choosing:
                low, high = state.board.neighbours(state.seat(p).space)
                actions += [Choose(p, low), Choose(p, high), Choose(p, None)]
            return actions
        if state.stage == "report":
            return [Report(p, made) for p in state.unreported for made in (True, False)]
        if state.stage == "points":
            return [Points(p, n) for p in state.unscored for n in (5, 30)]
        players = ([state.players[state.turn]] if state.turn is not None else state.players)
        actions = []
        for p in players:
            seat = state.seat(p)
            if not seat.laid:
                actions.append(LayDown(p))
            actions.append(GoOut(p))
        if state.turn is not None:
            actions.append(Next(players[0]))
            actions += [SkipOn(players[0], t) for t in state.players
                        if t != players[0] and not state.seat(t).skipped]
        return actions

    def describe(self, action: Action) -> str:
        table = describe_table_action(action)
        if table is not None:
            return table
        if isinstance(action, Choose):
            what = "a Twist card" if action.phase is None else f"phase {action.phase}"
            return f"{action.player} chooses {what}"
        if isinstance(action, DrawTwist):
            return f"{action.player} draws Twist card {action.card}"
        if isinstance(action, LayDown):
            said = f": {' '.join(map(str, action.cards))}" if action.cards else ""
            twist = f" (Twist card {action.twist})" if action.twist else ""
            return f"{action.player} lays down the phase{twist}{said}"
        if isinstance(action, HitOn):
            group = f"'s {action.group}" if action.group else ""
            cards = " ".join(map(str, action.cards))
            return f"{action.player} hits {cards} on {action.owner}{group}"
        if isinstance(action, GoOut):
            return f"{action.player} goes out"
        if isinstance(action, Report):
            return f"{action.player} {'made' if action.made else 'did not make'} the phase"
        if isinstance(action, Points):
            return f"{action.player} has {action.points} points"
        if isinstance(action, Next):
            return f"{action.player or 'the next player'} plays"
        if isinstance(action, SkipOn):
            return f"{action.player} skips {action.target}"
        return type(action).__name__

    # --- apply ---------------------------------------------------------------------------------
    def stopped(self, state: Phase10State) -> Phase10State:
        return replace(state, stopped=True, stage="over")

    def play(self, state: Phase10State, action: Action,
             at: float) -> tuple[Phase10State, list[Event]]:
        for name in _named(action):
            if name not in state.players:
                raise UnknownPlayer(f"{name} is not playing.")
        if state.drawing is not None and not isinstance(action, DrawTwist):
            raise IllegalAction(f"I am drawing {state.drawing}'s Twist card.")
        if isinstance(action, DrawTwist):
            return self._draw_twist(state, action)
        if isinstance(action, Choose):
            return self._choose(state, action)
        if isinstance(action, Report):
            return self._report(state, action)
        if isinstance(action, Points):
            return self._points(state, action)
        if state.stage == "choose":
            who = spoken(state.choosing)
            raise IllegalAction(f"First {who} must choose: a neighbouring phase or a Twist card.")
        if state.stage != "play":
            asked = self.current_player(state)
            raise IllegalAction(f"The hand is over: first I need to hear from {asked}.")
        if isinstance(action, LayDown):
            return self._lay_down(state, action)
        if isinstance(action, HitOn):
            return self._hit(state, action)
        if isinstance(action, GoOut):
            return self._go_out(state, action)
        if isinstance(action, Next):
            return self._next(state, action)
        if isinstance(action, SkipOn):
            return self._skip(state, action)
        raise IllegalAction(f"{type(action).__name__} is not a Phase 10 Twist move.")

    # --- a hand's start -------------------------------------------------------------------------
    def _deal(self, state: Phase10State) -> tuple[Phase10State, list[Event]]:
        """The next hand: the next dealer, each player's phase; Twist choices first."""
        seats = []
        for seat in state.seats:
            phase = None
            if seat.space <= state.board.last:
                number = state.board.spaces[seat.space]
                phase = None if number is None else BOARD_PHASES[number]
            seats.append(Seat(space=seat.space, phase=phase))
        dealer = (state.dealer + 1) % len(state.players)
        state = replace(state, seats=tuple(seats), hand=state.hand + 1, dealer=dealer,
                        stage="choose", out=None, deciding=(), drawing=None)
        if self.config.turns:
            state = replace(state, turn=state.players.index(state.order()[0]))
        if not state.choosing:
            state = replace(state, stage="play")
        return state, self._hand_events(state)

    def _hand_events(self, state: Phase10State) -> list[Event]:
        phases = tuple((p, state.seat(p).phase) for p in state.order())
        events: list[Event] = [HandStarted(state.hand, state.players[state.dealer], phases)]
        return events + self._ask_choice(state)

    def _ask_choice(self, state: Phase10State) -> list[Event]:
        if not state.choosing:
            return []
        player = state.choosing[0]
        return [ChoiceNeeded(player, state.board.neighbours(state.seat(player).space))]

    def _choose(self, state: Phase10State,
                action: Choose) -> tuple[Phase10State, list[Event]]:
        if state.stage != "choose" or action.player not in state.choosing:
            if state.on_twist(action.player) and state.stage in ("choose", "play"):
                raise IllegalAction(f"{action.player} has already chosen for this hand.")
            raise IllegalAction(f"{action.player} is not on a Twist space: "
                                f"{action.player}'s phase is {_phase_name(state, action.player)}.")
        low, high = state.board.neighbours(state.seat(action.player).space)
        if action.phase is not None and action.phase not in (low, high):
            raise OutOfRange(f"From this Twist space the phases are {low} and {high}, "
                             "or a Twist card.")
        if action.phase is not None:
            phase = BOARD_PHASES[action.phase]
            state = state.with_seat(action.player, phase=phase)
            return self._chosen(state, [PhaseChosen(action.player, phase)])
        state = state.with_seat(action.player, twist=True)
        if self.config.virtual_twist:
            return replace(state, drawing=action.player), []
        return self._chosen(state, [TwistTaken(action.player, None)])

    def _draw_twist(self, state: Phase10State,
                    action: DrawTwist) -> tuple[Phase10State, list[Event]]:
        if state.drawing != action.player:
            raise IllegalAction("No Twist card is being drawn for them.")
        if action.card not in self.free_twists(state):
            raise OutOfRange(f"Twist card {action.card} is not in the holder.")
        phase = TWIST_PHASES[action.card]
        state = replace(state.with_seat(action.player, phase=phase), drawing=None)
        return self._chosen(state, [TwistTaken(action.player, phase)])

    def _chosen(self, state: Phase10State,
                events: list[Event]) -> tuple[Phase10State, list[Event]]:
        if state.choosing:
            return state, events + self._ask_choice(state)
        return replace(state, stage="play"), events

    # --- during the hand ------------------------------------------------------------------------
    def _their_turn(self, state: Phase10State, player: str, what: str) -> None:
        if state.turn is not None and state.players[state.turn] != player:
            raise NotYourTurn(f"It is {state.players[state.turn]}'s turn: {player}, you may "
                              f"{what} only on your own turn.")

    def _lay_down(self, state: Phase10State,
                  action: LayDown) -> tuple[Phase10State, list[Event]]:
        player = action.player
        seat = state.seat(player)
        if seat.laid:
            raise IllegalAction(f"{player}'s phase is already down: only one phase a hand.")
        self._their_turn(state, player, "lay down")
        phase = seat.phase
        if action.twist is not None:
            if not seat.twist:
                raise IllegalAction(f"{player} has no Twist card this hand: {player}'s phase "
                                    f"is {_phase_name(state, player)}.")
            if phase is not None and phase.number != action.twist:
                raise IllegalAction(f"{player}'s Twist card is {phase.number}, not "
                                    f"{action.twist}.")
            if action.twist not in TWIST_PHASES:
                raise OutOfRange("Twist cards go from 1 to 10.")
            phase = TWIST_PHASES[action.twist]
        groups: tuple[Laid, ...] = ()
        checked = bool(action.cards) and phase is not None
        if checked:
            assert phase is not None
            verdict = check_phase(phase, action.cards)
            if not verdict.valid:
                raise IllegalAction(f"That is not {player}'s phase. {verdict.reason}")
            groups = verdict.groups
        state = state.with_seat(player, laid=True, groups=groups, phase=phase)
        return state, [PhaseLaidDown(player, phase, checked)]

    def _hit(self, state: Phase10State, action: HitOn) -> tuple[Phase10State, list[Event]]:
        player, owner = action.player, action.owner
        if not state.seat(player).laid:
            raise IllegalAction(f"{player}, lay down your own phase before hitting.")
        self._their_turn(state, player, "hit")
        if not state.seat(owner).laid:
            raise IllegalAction(f"{owner} has no phase down to hit on.")
        if any(c.kind == "skip" for c in action.cards):
            raise IllegalAction("A Skip cannot be hit on a phase.")
        groups = list(state.seat(owner).groups)
        if not groups:  # not read out: the referee cannot check it
            return state, [HitMade(player, owner, action.cards, None)]
        kinds = [g for g in groups if action.group in (None, g.kind)]
        if not kinds:
            raise IllegalAction(f"{owner}'s phase has no {action.group}.")
        for group in kinds:
            grown: Laid | None = group
            for card in action.cards:
                grown = grown.add(card) if grown is not None else None
            if grown is not None:
                groups[groups.index(group)] = grown
                state = state.with_seat(owner, groups=tuple(groups))
                return state, [HitMade(player, owner, action.cards, grown)]
        cards = " and ".join(str(c) for c in action.cards)
        where = spoken([g.words() for g in kinds]).replace(" and ", " or ")
        raise IllegalAction(f"{cards} does not fit on {owner}'s {where}.")

    def _go_out(self, state: Phase10State, action: GoOut) -> tuple[Phase10State, list[Event]]:
        player = action.player
        self._their_turn(state, player, "go out")
        state = state.with_seat(player, laid=True, made=True)
        state = replace(state, out=player, stage="report", turn=None)
        state = self._known_results(state)
        return self._after_report(state, [WentOut(player)])

    @staticmethod
    def _known_results(state: Phase10State) -> Phase10State:
        """Whoever laid down during the hand completed their phase."""
        for p in state.players:
            if state.seat(p).laid:
                state = state.with_seat(p, made=True)
        return state

    def _next(self, state: Phase10State, action: Next) -> tuple[Phase10State, list[Event]]:
        assert state.turn is not None
        if action.player is not None:
            turn = state.players.index(action.player)
            if state.seat(action.player).skipped:
                raise IllegalAction(f"{action.player} was skipped and loses this turn.")
            state = replace(state, turn=turn)
            return state, [TurnPassed(action.player, ())]
        return self._pass_turn(state)

    def _pass_turn(self, state: Phase10State) -> tuple[Phase10State, list[Event]]:
        assert state.turn is not None
        n = len(state.players)
        turn = state.turn
        skipped = []
        for _ in range(2 * n):
            turn = (turn + 1) % n
            player = state.players[turn]
            if state.seat(player).skipped:
                state = state.with_seat(player, skipped=False)
                skipped.append(player)
                continue
            break
        state = replace(state, turn=turn)
        return state, [TurnPassed(state.players[turn], tuple(skipped))]

    def _skip(self, state: Phase10State, action: SkipOn) -> tuple[Phase10State, list[Event]]:
        if state.turn is None:
            raise IllegalAction("I am not keeping the turns in this game.")
        self._their_turn(state, action.player, "play a Skip")
        if action.target == action.player:
            raise IllegalAction("A Skip is played on another player.")
        if state.seat(action.target).skipped:
            raise IllegalAction(f"A Skip already waits on {action.target}.")
        state = state.with_seat(action.target, skipped=True)
        state, events = self._pass_turn(state)
        return state, [SkipPlayed(action.player, action.target), *events]

    # --- the end of a hand ----------------------------------------------------------------------
    def _report(self, state: Phase10State, action: Report) -> tuple[Phase10State, list[Event]]:
        if state.stage != "report":
            raise IllegalAction("I ask who made their phase when the hand is over: say who "
                                "went out first.")
        seat = state.seat(action.player)
        if seat.made is not None:
            said = "went out" if state.out == action.player else (
                "made the phase" if seat.made else "did not make it")
            raise IllegalAction(f"I already have that {action.player} {said}.")
        state = state.with_seat(action.player, made=action.made)
        return self._after_report(state, [Reported(action.player, action.made)])

    def _after_report(self, state: Phase10State,
                      events: list[Event]) -> tuple[Phase10State, list[Event]]:
        if state.unreported:
            player = state.unreported[0]
            return state, [*events, ReportNeeded(player, state.seat(player).twist)]
        return self._move_pawns(state, events)

    def _move_pawns(self, state: Phase10State,
                    events: list[Event]) -> tuple[Phase10State, list[Event]]:
        moves = []
        seats = list(state.seats)
        for i, player in enumerate(state.players):
            seat = seats[i]
            result: Result = ("out" if state.out == player else
                              "made" if seat.made else "failed")
            to = movement(state.board, seat.space, result, seat.twist)
            moves.append(HandResult(player, result, seat.twist, seat.space, to))
            seats[i] = replace(seat, space=to)
        state = replace(state, seats=tuple(seats), history=(*state.history, tuple(moves)))
        events = [*events, PawnsMoved(state.hand, tuple(moves))]
        finishers = tuple(m.player for m in moves if m.to > state.board.last)
        if not finishers:
            state, more = self._deal(state)
            return state, events + more
        if len(finishers) == 1 or state.out in finishers:
            winner = finishers[0] if len(finishers) == 1 else str(state.out)
            return replace(state, winners=(winner,), stage="over"), [
                *events, GameWon((winner,))]
        state = replace(state, stage="points", deciding=finishers)
        return state, [*events, PointsNeeded(finishers)]

    def _points(self, state: Phase10State, action: Points) -> tuple[Phase10State, list[Event]]:
        if state.stage != "points" or action.player not in state.deciding:
            raise IllegalAction("Hand points are counted only to decide between players "
                                "past Phase 10 in the same hand.")
        if action.points < 0 or action.points % 5:
            raise OutOfRange("Hand points are a multiple of 5: 5 a card up to 9, 10 for 10 to "
                             "12, 15 a Skip, 25 a Wild.")
        state = state.with_seat(action.player, points=action.points)
        events: list[Event] = [PointsTold(action.player, action.points)]
        if state.unscored:
            return state, events
        low = min(state.seat(p).points or 0 for p in state.deciding)
        winners = tuple(p for p in state.deciding if state.seat(p).points == low)
        return replace(state, winners=winners, stage="over"), [*events, GameWon(winners)]


def spoken(items: Sequence[str]) -> str:
    """ "Ann, Bob and Cy" (the engine's own: it imports nothing of the speech layer)."""
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


def _phase_name(state: Phase10State, player: str) -> str:
    phase = state.seat(player).phase
    if phase is None:
        return "a Twist card" if state.seat(player).twist else "not chosen yet"
    return f"{phase.name}, {phase.words()}"


def _named(action: Action) -> list[str]:
    names = []
    for field in ("player", "owner", "target", "by"):
        value = getattr(action, field, None)
        if isinstance(value, str):
            names.append(value)
    return names
