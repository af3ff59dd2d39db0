"""The layers stay apart: the rules engine depends on nothing but Python itself."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "referee" / "engine"


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth of the file (top-level names)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # a relative import stays inside its package
                names.add("referee.engine")
            elif node.module:
                names.add(node.module)
    return names


def outside_the_engine(path: Path) -> set[str]:
    return {
        name for name in imported_modules(path)
        if name.split(".")[0] not in sys.stdlib_module_names
        and not (name == "referee.engine" or name.startswith("referee.engine."))
    }


def test_the_engine_imports_only_the_standard_library_and_itself():
    files = sorted(ENGINE.glob("*.py"))
    assert len(files) >= 4
    found = {f.name: outside_the_engine(f) for f in files}
    assert all(not names for names in found.values()), found


def test_the_check_sees_a_third_party_import(tmp_path):
    """The check above can fail: a file importing numpy or the speech side is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text("import json\nfrom numpy import array\n\ndef f():\n"
                   "    from referee.speech import tts\n")
    assert outside_the_engine(bad) == {"numpy", "referee.speech"}


# --- speech: audio -> words -> intent; sentence -> audio -------------------------------------

SPEECH = ROOT / "referee" / "speech"
#: What each group of referee/speech may import of the others.
MAY_USE = {
    "understanding": {"understanding"},
    "hearing": {"hearing", "understanding", "audio", "portaudio"},
    "speaking": {"speaking", "audio", "portaudio"},
}


def speech_uses(path: Path) -> set[str]:
    """The groups of referee/speech (and its shared modules: audio, portaudio) a file imports."""
    return {name.split(".")[2] for name in imported_modules(path)
            if name.startswith("referee.speech.")}


def test_speech_flows_one_way():
    """Understanding knows nothing of sound; hearing feeds it words (and takes its
    phrase set for the grammar); speaking only makes sound. The pipeline that joins
    hearing to understanding is listen.py."""
    found = {f"{group}/{p.name}": speech_uses(p) - allowed
             for group, allowed in MAY_USE.items()
             for p in sorted((SPEECH / group).glob("*.py"))}
    assert len(found) >= 10
    assert all(not extra for extra in found.values()), found


# --- the runtime knows no game -------------------------------------------------------------

PHRASES = ROOT / "referee" / "speech" / "understanding" / "phrases"
#: The game-independent runtime: everything but the games, their rules and the registry.
#: (The training of the referee's ears is not in the package at all: ``training/``
#: beside ``benchmarks/`` draws its lines from the games' phrase files.)
RUNTIME = [p for p in [*sorted((ROOT / "referee").glob("*.py")),
                       *sorted((ROOT / "referee" / "speech").rglob("*.py"))]
           if p.name != "__init__.py"]
#: What the runtime may import of the games: the registry and the contract.
ALLOWED = {"referee.games", "referee.games.base", "referee.engine", "referee.engine.core",
           "referee.engine.clock"}


def game_words() -> set[str]:
    """Each game's names and the kinds and fields of its own intents (not the common ones)."""
    import tomllib

    from referee.games import GAMES

    def kinds_and_fields(path: Path) -> set[str]:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return {key if key != "kind" else str(value)
                for intent in data.get("intents", []) for key, value in intent.items()
                if key not in ("sentences", "when", "lenient")}

    # Words of the template language itself (a slot's kind; "when", "lenient"), not of a game.
    common = kinds_and_fields(PHRASES / "common.toml") | {"number", "words", "player"}
    words: set[str] = set()
    for spec in GAMES.values():
        words |= {spec.name, *spec.aliases}
        words |= kinds_and_fields(spec.phrase_file) - common
    return words


def game_specific(path: Path, words: set[str]) -> set[str]:
    """Game-specific imports, and string constants naming a game or one of its fields."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = {name for name in imported_modules(path)
             if name.startswith(("referee.games.", "referee.engine.")) and name not in ALLOWED}
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docstrings):
            found |= {w for w in words if w == node.value.strip().casefold()}
    return found


def test_the_runtime_names_no_game_nor_a_game_s_intents():
    words = game_words()
    assert {"race65", "shut-the-box", "flip", "owner", "caller", "tiles"} <= words
    assert "number" not in words
    assert len(RUNTIME) >= 10
    found = {p.name: game_specific(p, words) for p in RUNTIME}
    assert all(not names for names in found.values()), found


def test_the_runtime_check_sees_a_game_in_the_runtime(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('"""About race65, in a docstring: allowed."""\n'
                   "from referee.games.race65 import Race65Spec\n"
                   "def f(intent):\n    return intent['caller']\n")
    assert game_specific(bad, game_words()) == {"referee.games.race65", "caller"}


# --- no import cycle ---------------------------------------------------------------------


def import_graph(top: Path) -> dict[str, set[str]]:
    """The package under ``top``: each module and the modules of the package it
    imports, at any depth of the file (an import inside a function counts: it
    is an arrow all the same)."""
    modules: dict[str, Path] = {}
    for path in top.rglob("*.py"):
        parts = list(path.relative_to(top.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        named: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                named |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                named |= {base, *(f"{base}.{alias.name}" for alias in node.names)}
        graph[name] = set()
        for other in named:
            while other and other not in modules:
                other = other.rpartition(".")[0]
            if other and other != name:
                graph[name].add(other)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, round and round (the
    strongly connected components of more than one module, by Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        for other in sorted(graph[name]):
            if other not in index:
                visit(other)
                low[name] = min(low[name], low[other])
            elif other in stack:
                low[name] = min(low[name], index[other])
        if low[name] == index[name]:
            group = []
            while True:
                other = stack.pop()
                group.append(other)
                if other == name:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return found


def test_no_module_of_the_referee_imports_itself_round_a_cycle():
    graph = import_graph(ROOT / "referee")
    assert len(graph) >= 50
    assert "referee.speech.understanding.intents" in graph["referee.games"]
    assert cycles(graph) == []


def test_the_cycle_check_sees_a_cycle_through_an_import_in_a_function(tmp_path):
    """The matcher once imported the game registry inside a method, which
    closed a seven-file cycle; the check above finds one like it."""
    top = tmp_path / "pkg"
    (top / "games").mkdir(parents=True)
    (top / "__init__.py").write_text("")
    (top / "games" / "__init__.py").write_text("from pkg.games.base import Spec\n")
    (top / "games" / "base.py").write_text("from pkg.intents import Matcher\nclass Spec: ...\n")
    (top / "intents.py").write_text("class Matcher:\n    def for_game(self):\n"
                                    "        from . import games\n")
    (top / "alone.py").write_text("import json\n")
    assert cycles(import_graph(top)) == [["pkg.games", "pkg.games.base", "pkg.intents"]]


def test_the_protocol_imports_no_device_code():
    """The brain's typed inputs and outputs are plain values: ``protocol.py``
    reads what the ears measured (``OverVoice``) from the hearing interface,
    not from the microphone's module, which opens PortAudio (#84)."""
    devices = {"referee.speech.hearing.mic", "sounddevice", "referee.speech.speaking.tts"}
    assert imported_modules(ROOT / "referee" / "protocol.py") & devices == set()


@pytest.mark.slow
def test_tests_and_benchmarks_share_helpers_only_through_the_harness():
    """A test imports no other test; the harness imports neither tests nor
    benchmarks; benchmarks import no test; training imports none of them
    (the harness uses training's rooms, one way: the progress bar they share
    is training's, #84)."""
    found = {}
    for folder, banned in (("tests", {"tests"}), ("harness", {"tests", "benchmarks"}),
                           ("benchmarks", {"tests"}),
                           ("training", {"tests", "benchmarks", "harness"})):
        for path in sorted((ROOT / folder).glob("*.py")):
            wrong = {name for name in imported_modules(path) if name.split(".")[0] in banned}
            if wrong:
                found[f"{folder}/{path.name}"] = wrong
    assert found == {}


#: What a player's installation must not need: PyTorch, and the project's own
#: research and test folders (training, benchmarks, the harness, tests).
NOT_FOR_PLAYERS = {"torch", "training", "benchmarks", "harness", "tests"}


def research_in(package: Path) -> dict[str, set[str]]:
    """The files of ``package`` that import what a player does not install."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        wrong = {name for name in imported_modules(path)
                 if name.split(".")[0] in NOT_FOR_PLAYERS}
        if wrong:
            found[str(path.relative_to(package.parent))] = wrong
    return found


def test_the_player_s_package_holds_no_research():
    """Training (PyTorch) sits in ``training/`` beside ``benchmarks/``, run by
    ``./run train``; nothing in ``referee/`` imports it, PyTorch, or the
    project's research and test folders."""
    assert research_in(ROOT / "referee") == {}
    assert not (ROOT / "referee" / "speech" / "training").exists()
    assert "torch" in {n.split(".")[0] for p in (ROOT / "training").glob("*.py")
                       for n in imported_modules(p)}


def test_the_research_check_sees_torch_in_the_package(tmp_path):
    (tmp_path / "referee").mkdir()
    (tmp_path / "referee" / "ok.py").write_text("import numpy\n")
    (tmp_path / "referee" / "ears.py").write_text("def f():\n    import torch.nn\n"
                                                  "    from training.cli import run\n")
    assert research_in(tmp_path / "referee") == {"referee/ears.py": {"torch.nn", "training.cli"}}


# --- rooms a newcomer can read ---------------------------------------------------------------

#: The longest module outside the pure rules (``engine/``), and the longest function anywhere.
MOST_LINES = 600
MOST_FUNCTION_LINES = 60


def too_long(package: Path) -> list[str]:
    """The modules of ``package`` over :data:`MOST_LINES` lines (the rules
    engine excepted) and its functions over :data:`MOST_FUNCTION_LINES`."""
    found = []
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(package.parent))
        lines = len(text.splitlines())
        if lines > MOST_LINES and "engine" not in path.relative_to(package).parts:
            found.append(f"{name}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MOST_FUNCTION_LINES:
                    found.append(f"{name}: {node.name}() {length} lines")
    return found


def test_no_module_nor_function_of_the_referee_is_too_long_to_read():
    assert too_long(ROOT / "referee") == []


def test_the_length_check_sees_a_long_module_and_a_long_function(tmp_path):
    (tmp_path / "referee" / "engine").mkdir(parents=True)
    long_body = "".join(f"    x{i} = {i}\n" for i in range(61))
    (tmp_path / "referee" / "big.py").write_text("x = 1\n" * 601)
    (tmp_path / "referee" / "engine" / "rules.py").write_text("x = 1\n" * 700)  # allowed
    (tmp_path / "referee" / "engine" / "moves.py").write_text(f"def f():\n{long_body}")
    assert too_long(tmp_path / "referee") == ["referee/big.py: 601 lines",
                                               "referee/engine/moves.py: f() 62 lines"]


# --- drivers talk to the brain by step alone ------------------------------------------------

#: What drives the brain: the table (and its audio scripts), the live loop,
#: typed play, the command's set-up and the screen.
DRIVERS = [ROOT / "referee" / name for name in ("table.py", "live.py", "textplay.py",
                                                "tableplay.py")]


def brain_reads(path: Path) -> list[str]:
    """Where a driver touches the brain other than by ``step``: any attribute
    of something called ``session`` (``session.now``, ``self.session.game``,
    ``table.session.left`` ...) but its ``step``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Attribute) or node.attr == "step":
            continue
        owner = node.value
        name = owner.id if isinstance(owner, ast.Name) else (
            owner.attr if isinstance(owner, ast.Attribute) else None)
        if name == "session":
            found.append(f"{path.name}:{node.lineno}: .session.{node.attr}")
    return found


def test_drivers_learn_the_game_from_the_brain_s_outputs_only():
    """The table, the live loop, typed play and the set-up send the brain
    inputs and read what it answers (a snapshot of the game, what can be said
    now, when to tick next, that the table left); none reads its fields."""
    assert all(path.is_file() for path in DRIVERS)
    assert [hit for path in DRIVERS for hit in brain_reads(path)] == []


def test_the_driver_check_sees_a_field_read(tmp_path):
    driver = tmp_path / "driver.py"
    driver.write_text("def run(table, session):\n    table.session.step(1)\n"
                      "    if table.session.left:\n        return session.now\n")
    assert brain_reads(driver) == ["driver.py:3: .session.left", "driver.py:4: .session.now"]


#: Where tests, benchmarks and their harness live: they read the game as a driver does.
READERS = ("tests", "benchmarks", "harness", "training")


def _made_brain(value: ast.expr | None) -> bool:
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
            and value.func.id == "Session")


def reads_of_the_brain(path: Path) -> list[str]:
    """Where a test or a benchmark reads the brain other than through
    ``step``: an attribute of ``Session(...)``, of a name bound to one in the
    same function (or module), or of anything's ``.session`` (a drive's, a
    table's); and a brain held as ``Session`` (an annotation, a return),
    which mypy would let read its fields (as a
    :class:`~referee.protocol.Brain` it refuses them)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    scopes: list[ast.AST] = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))]
    for scope in scopes:
        own = (scope.body if isinstance(scope, ast.Module) else [scope])
        nodes = [n for top in own for n in ast.walk(top)]
        bound = [n for n in (own if isinstance(scope, ast.Module) else nodes)
                 if isinstance(n, ast.Assign) and _made_brain(n.value)]
        names = {t.id for n in bound for t in n.targets if isinstance(t, ast.Name)}
        for node in nodes:
            held = (node.annotation if isinstance(node, ast.arg | ast.AnnAssign)
                    else node.returns if isinstance(node, ast.FunctionDef) else None)
            if held is not None and "Session" in ast.unparse(held).split("."):
                found.add(f"{path.name}:{getattr(node, 'lineno', 0)}: held as Session")
            if not isinstance(node, ast.Attribute) or node.attr == "step":
                continue
            owner = node.value
            if ((isinstance(owner, ast.Name) and owner.id in names) or _made_brain(owner)
                    or (isinstance(owner, ast.Attribute) and owner.attr == "session")):
                found.add(f"{path.name}:{node.lineno}: .{node.attr}")
    return sorted(found)


def test_tests_and_benchmarks_read_the_game_from_the_brain_s_outputs():
    """What a test or a benchmark knows of a game is what a driver knows: the
    outputs folded (:class:`~referee.report.Report`: ``drive.state``,
    ``table.final`` ...), the log, the brain's answer to the ears' question;
    the game's own engine state only through the test's own spec
    (:class:`harness.brain.Kept`). So does every module of the package but
    the brain's own. The brain's surface is ``step``."""
    package = [p for p in sorted((ROOT / "referee").rglob("*.py"))
               if p.name != "session.py" and "brain" not in p.relative_to(ROOT).parts]
    paths = [*package, *(p for folder in READERS for p in sorted((ROOT / folder).rglob("*.py")))]
    assert len(paths) > 150
    assert [hit for path in paths for hit in reads_of_the_brain(path)] == []


def test_the_test_check_sees_a_brain_read_however_it_is_held(tmp_path):
    """The reads the tests made before (#84 item 3): a session's game and
    matcher, a drive's session's spec, a brain annotated and returned as a
    Session; a drive called ``session`` is no brain."""
    test = tmp_path / "test_it.py"
    test.write_text("def made(spec) -> Session:\n    return Session(spec)\n\n"
                    "def test(spec, reader: Session):\n"
                    "    session = Session(spec)\n    session.step(1)\n"
                    "    assert session.game.depth == session.matcher.floor\n"
                    "    assert drive.session.spec is Session(spec).spec\n"
                    "    session = Drive(spec)\n\n"
                    "def other(session):\n    return session.hear('hit')\n")
    assert reads_of_the_brain(test) == [
        "test_it.py:1: held as Session", "test_it.py:4: held as Session",
        "test_it.py:7: .game", "test_it.py:7: .matcher", "test_it.py:8: .spec"]


def test_the_drivers_are_typed_against_a_brain_that_only_steps():
    """The table, typed play and replay take a :class:`~referee.protocol.Brain`
    (``step`` and nothing else), so mypy refuses a driver, or a test through
    a table, that reads the brain's fields."""
    import typing

    from referee.protocol import Brain
    from referee.replay import replay_records
    from referee.table import Table
    from referee.textplay import ScriptTable, run_script

    assert [name for name in dir(Brain) if not name.startswith("_")] == ["step"]
    for driver in (Table.__init__, ScriptTable.__init__, run_script, replay_records):
        assert typing.get_type_hints(driver)["session"] is Brain, driver


def test_the_tests_drive_reads_the_game_from_the_outputs():
    """``harness.brain.Drive`` has no window onto the brain's fields: what a
    test reads of the game (the state, the result, when to tick, what can be
    said, whether the table left) is what the outputs said."""
    from harness.brain import Drive
    from referee.games.race65 import Race65Spec

    assert "__getattr__" not in vars(Drive)
    drive = Drive(Race65Spec(["Ann", "Bob"]))
    drive.start()
    assert drive.state["turn"] == "Ann"
    assert drive.wake is None
    assert not drive.over
    drive.hear("end the game", "Ann", 1.0)
    drive.hear("yes", "Bob", 2.0)
    assert drive.over
    assert drive.final["winner"] is None
    assert not drive.left


def test_the_brain_is_typed_against_the_game_contract():
    """The brain takes a game as :class:`~referee.games.contract.Contract`
    (protocols: what it asks of every game), not as a game's class."""
    import typing

    from referee.brain.hearing import awaited, expectation
    from referee.brain.shared import Shared
    from referee.games.contract import Contract, Policy, Talk

    assert typing.get_type_hints(Shared.__init__)["spec"] is Contract
    assert typing.get_type_hints(awaited)["spec"] is Talk
    assert typing.get_type_hints(expectation)["spec"] is Policy


@pytest.mark.slow
def test_mypy_refuses_a_field_of_the_brain_read_and_a_game_that_breaks_the_contract(tmp_path):
    """Read through a table, the brain has only ``step``; a game that lacks
    a method of the contract (here: what it says of its events) is refused
    by the brain, where one that has them all (Race to 65) is taken."""
    from mypy import api

    driver = tmp_path / "driver.py"
    driver.write_text("from referee.table import Table\n\n\n"
                      "def whose_turn(table: Table) -> object:\n"
                      "    return table.session.game\n")
    game = tmp_path / "game.py"
    game.write_text("from referee.games.race65 import Race65Spec\n"
                    "from referee.session import Session\n\n\n"
                    "class Mute:\n"
                    "    def __init__(self, spec: Race65Spec) -> None:\n"
                    "        self.spec = spec\n\n\n"
                    "def referee_for(spec: Race65Spec) -> tuple[Session, Session]:\n"
                    "    return Session(spec), Session(Mute(spec))\n")
    out, _, status = api.run([str(driver), str(game), "--strict", "--no-incremental",
                              "--follow-imports=silent"])
    assert status == 1
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert len(errors) == 2, out
    assert '"Brain" has no attribute "game"' in out
    assert 'game.py:11: error: Argument 1 to "Session" has incompatible type "Mute"; ' \
        'expected "Contract"' in out


def imports_in_scripts(folder: Path) -> list[tuple[str, str]]:
    """Every ``from referee... import NAME`` in the shell scripts' Python lines."""
    import re

    found = []
    for path in sorted(folder.glob("*.sh")):
        for module, names in re.findall(r"from (referee[\w.]*) import ([\w, ]+)",
                                         path.read_text(encoding="utf-8")):
            found += [(module, name.strip()) for name in names.split(",") if name.strip()]
    return found


def test_what_the_set_up_script_imports_is_where_it_looks():
    """The set-up checks the model's files with the package's own code: a
    module split in two must not leave the script importing a name from where
    it was (a fresh clone's set-up once failed so)."""
    import importlib

    wanted = imports_in_scripts(ROOT / "scripts")
    assert len(wanted) >= 3
    missing = [f"{module}.{name}" for module, name in wanted
               if not hasattr(importlib.import_module(module), name)]
    assert missing == []
