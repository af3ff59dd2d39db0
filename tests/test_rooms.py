"""The brain's rooms own their state (#74 item 1): the turn clock is a
value (:class:`~referee.brain.turnclock.TurnClock`) that only the clock room
replaces at will; every other room changes it through one of its
transitions, by name, never by setting its fields. No room calls another,
each field is set by one module, and nothing changes in place but the
step's ledgers and the game, each module applying only its own actions."""

from __future__ import annotations

import ast
from pathlib import Path

BRAIN = Path(__file__).resolve().parent.parent / "referee"
ROOMS = [BRAIN / "session.py", *sorted((BRAIN / "brain").glob("*.py"))]
#: The room that keeps the clock.
CLOCK_ROOM = "clock.py"
#: The clock's state as it was kept before it was a value: fields of the brain.
CLOCK_FIELDS = {"_turn_limit", "_fired", "_resume_at", "_delayed_to", "_paused",
                "_paused_clock", "_held", "_told_spoken", "_legacy_clock"}


def clock_writes(path: Path) -> list[str]:
    """How a module outside the clock room changes the clock, when not by a
    transition of its own value (``self.clock = self.clock.new_turn(...)``):
    a clock field set on the brain (``self._fired = ...``), or the clock
    replaced by anything else (``replace(self.clock, ...)``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            for leaf in ast.walk(target):
                if not (isinstance(leaf, ast.Attribute) and isinstance(leaf.value, ast.Name)
                        and leaf.value.id == "self"):
                    continue
                if leaf.attr in CLOCK_FIELDS:
                    found.append(f"{path.name}:{node.lineno}: self.{leaf.attr}")
                elif leaf.attr == "clock" and not _a_transition(node.value):
                    found.append(f"{path.name}:{node.lineno}: self.clock replaced")
    return found


def _a_transition(value: ast.expr | None) -> bool:
    """``self.clock.NAME(...)``, or a new clock made in ``__init__`` (``TurnClock(...)``)."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Name):
        return func.id == "TurnClock"
    return (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute)
            and func.value.attr == "clock")


def test_only_the_clock_room_sets_the_clock_and_others_use_its_transitions():
    assert {p.name for p in ROOMS} >= {"session.py", "clock.py", "questions.py", "moves.py"}
    found = [hit for path in ROOMS if path.name != CLOCK_ROOM for hit in clock_writes(path)]
    assert found == []


def test_the_room_check_sees_a_clock_field_set_and_the_clock_replaced(tmp_path):
    """Today's check against the brain as it was (questions.py clearing the
    clock's marks by hand) and a clock replaced outside its room."""
    room = tmp_path / "questions.py"
    room.write_text("class Questions:\n"
                    "    def undo(self):\n"
                    "        self._fired = set()\n"
                    "        self.clock = replace(self.clock, fired=frozenset())\n"
                    "        self.clock = self.clock.marks_again()\n")
    assert clock_writes(room) == ["questions.py:3: self._fired",
                                  "questions.py:4: self.clock replaced"]


# --- every room: no stubs, no calls into another room, each field set by one -------------
#: The rooms, each a class over :class:`~referee.brain.shared.Shared`; the
#: session joins them (it may call them all, and sets only its own fields).
ROOM_MODULES = ("clock.py", "questions.py", "moves.py", "answers.py")


def methods(path: Path) -> set[str]:
    """The names a module's classes define."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {item.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            for item in node.body if isinstance(item, ast.FunctionDef)}


def calls_into_other_rooms(path: Path, own: set[str], rooms: dict[str, set[str]]) -> list[str]:
    """``self.NAME(...)`` in a room where NAME is another room's method."""
    others = {name: room for room, names in rooms.items() if room != path.name
              for name in names - own}
    return [f"{path.name}:{node.lineno}: {others[node.func.attr]}'s {node.func.attr}"
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"
            and node.func.attr in others]


def fields_set(path: Path) -> dict[str, int]:
    """The brain's fields a module sets (``self.NAME = ...``), each with its
    first line; in ``__init__`` of shared.py every field is made, not set."""
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.FunctionDef) or (
                path.name == "shared.py" and node.name == "__init__"):
            continue
        for statement in ast.walk(node):
            if isinstance(statement, ast.Assign):
                targets = statement.targets
            elif isinstance(statement, ast.AugAssign | ast.AnnAssign):
                targets = [statement.target]
            else:
                continue
            for target in targets:
                for leaf in ast.walk(target):
                    if (isinstance(leaf, ast.Attribute) and isinstance(leaf.value, ast.Name)
                            and leaf.value.id == "self"):
                        found.setdefault(leaf.attr, statement.lineno)
    return found


def shared_writes(paths: list[Path]) -> list[str]:
    """Fields set by more than one module."""
    setters: dict[str, list[str]] = {}
    for path in paths:
        for field, line in fields_set(path).items():
            setters.setdefault(field, []).append(f"{path.name}:{line}")
    return [f"self.{field}: {', '.join(where)}" for field, where in sorted(setters.items())
            if len(where) > 1]


def test_the_brain_has_no_stub():
    stubs = [f"{path.name}:{node.lineno}" for path in ROOMS
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Raise) and "NotImplementedError" in ast.unparse(node)]
    assert stubs == []


def test_no_room_calls_another_room():
    rooms = {path.name: methods(path) for path in ROOMS if path.name in ROOM_MODULES}
    assert set(rooms) == set(ROOM_MODULES)
    shared = methods(BRAIN / "brain" / "shared.py")
    found = [hit for path in ROOMS if path.name in ROOM_MODULES
             for hit in calls_into_other_rooms(path, rooms[path.name] | shared, rooms)]
    assert found == []


def test_each_field_of_the_brain_is_set_by_one_room():
    assert shared_writes(ROOMS) == []


def test_the_checks_see_a_room_call_another_and_two_rooms_set_one_field(tmp_path):
    """The brain as it was: moves asked questions and cleared the open one,
    which the questions room sets too; the questions room played moves."""
    moves, questions = tmp_path / "moves.py", tmp_path / "questions.py"
    moves.write_text("class Moves:\n"
                     "    def _act(self): ...\n"
                     "    def _leave(self):\n"
                     "        self.question = None\n"
                     "        return self._ask()\n")
    questions.write_text("class Questions:\n"
                         "    def _ask(self):\n"
                         "        self.question = 1\n"
                         "    def _resolve(self):\n"
                         "        return self._act()\n")
    rooms = {"moves.py": methods(moves), "questions.py": methods(questions)}
    assert calls_into_other_rooms(moves, rooms["moves.py"], rooms) == [
        "moves.py:5: questions.py's _ask"]
    assert calls_into_other_rooms(questions, rooms["questions.py"], rooms) == [
        "questions.py:5: moves.py's _act"]
    assert shared_writes([moves, questions]) == ["self.question: moves.py:4, questions.py:3"]


# --- what changes in place: the game, and nothing else but the step's ledgers ----------------
#: What a step collects as it goes (records to log, outputs):
#: appended to by whichever room logs or says something.
LEDGERS = {"_out", "_logged"}
#: The engine's actions each module may apply to the game: the moves room
#: plays, undoes and draws (any); the clock room holds and restarts the
#: engine's timer; the session applies a timeout and the table's stop.
GAME_CHANGES = {"moves.py": None, "clock.py": {"PauseClock", "ResumeClock"},
                "session.py": {"Timeout", "StopGame"}}


def changed_in_place(path: Path) -> list[str]:
    """Where a module changes a field of the brain without setting it: a
    method that mutates (``self._moves.pop()``), or the game applied to
    (``self.game.apply(Flip(...))``) by a module not allowed that action."""
    mutators = {"append", "extend", "pop", "insert", "remove", "clear", "update", "add",
                "discard", "apply", "undo_to", "popleft", "appendleft"}
    allowed = GAME_CHANGES.get(path.name, set())
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in mutators and isinstance(node.func.value, ast.Attribute)
                and isinstance(node.func.value.value, ast.Name)
                and node.func.value.value.id == "self"):
            continue
        field = node.func.value.attr
        if field in LEDGERS:
            continue
        if field == "game" and node.args and isinstance(node.args[0], ast.Call):
            action = ast.unparse(node.args[0].func)
            if allowed is None or action in allowed:
                continue
        elif field == "game" and allowed is None:
            continue
        found.append(f"{path.name}:{node.lineno}: self.{field}.{node.func.attr}")
    return found


def test_nothing_changes_in_place_but_the_game_by_its_own_rooms():
    assert [hit for path in ROOMS for hit in changed_in_place(path)] == []


def test_the_check_sees_a_list_popped_and_a_move_played_by_the_clock(tmp_path):
    """The brain as it was: the moves made a list that undo popped; and a
    clock room that played a move instead of holding the timer."""
    moves, clock = tmp_path / "moves.py", tmp_path / "clock.py"
    moves.write_text("class Moves:\n"
                     "    def _undo(self):\n"
                     "        self._moves.pop()\n"
                     "        self.game.undo_to(3, 1.0)\n")
    clock.write_text("class Clock:\n"
                     "    def _hold(self):\n"
                     "        self.game.apply(PauseClock(), 1.0)\n"
                     "        self.game.apply(Flip('Ann', 'Ann', 7), 1.0)\n")
    assert changed_in_place(moves) == ["moves.py:3: self._moves.pop"]
    assert changed_in_place(clock) == ["clock.py:4: self.game.apply"]


# --- rooms held, not inherited (#84 item 1) ---------------------------------------------------
#: Rooms the session holds as a field (``self.hearing``) rather than inherits:
#: a class of their own, told what they may read (a view), answering a value.
HELD_ROOMS = {"hearing.py": "Hearing", "parts.py": "Streams", "news.py": "News"}
#: What a held room may not import: the session, and every room (the brain's
#: values, shared.py's question among them, it may).
ROOM_IMPORTS = {"referee.session", *(f"referee.brain.{m.removesuffix('.py')}"
                                     for m in (*ROOM_MODULES, *HELD_ROOMS))}


def reaches_back(path: Path) -> list[str]:
    """Where a held room could call back into the session: an import of the
    session or of another room, or a name of the brain's classes."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        modules = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                   else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        line = getattr(node, "lineno", 0)
        found += [f"{path.name}:{line}: imports {m}" for m in modules if m in ROOM_IMPORTS]
        if isinstance(node, ast.Name | ast.Attribute):
            name = node.id if isinstance(node, ast.Name) else node.attr
            if name in ("Session", "Shared", "_out", "_logged"):
                found.append(f"{path.name}:{node.lineno}: {name}")
    return found


def test_a_held_room_calls_nothing_of_the_session():
    """The hearing room is a field of the brain, made alone, reading only the
    view it is given: it imports neither the session nor another room, and
    the session does not inherit it."""
    for module, room in HELD_ROOMS.items():
        assert reaches_back(BRAIN / "brain" / module) == []
        assert f"self.{room.lower()} = {room}(" in (BRAIN / "brain" / "shared.py").read_text()
    session = ast.parse((BRAIN / "session.py").read_text(encoding="utf-8"))
    bases = {ast.unparse(b) for node in ast.walk(session) if isinstance(node, ast.ClassDef)
             for b in node.bases}
    assert not bases & set(HELD_ROOMS.values())


def test_the_check_sees_a_held_room_reach_back_into_the_session(tmp_path):
    """The hearing as it was: methods of the session, reading and saying
    through it."""
    room = tmp_path / "hearing.py"
    room.write_text("from referee.brain.answers import Answers\n"
                    "class Hearing:\n"
                    "    def hear(self, session: Session):\n"
                    "        session._out.append(1)\n")
    assert reaches_back(room) == ["hearing.py:1: imports referee.brain.answers",
                                  "hearing.py:3: Session", "hearing.py:4: _out"]
