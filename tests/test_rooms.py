"""The brain's rooms own their state (#74 item 1): the turn clock is a
value (:class:`~referee.brain.turnclock.TurnClock`) that only the clock room
replaces at will; every other room changes it through one of its
transitions, by name, never by setting its fields."""

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
