"""The layers stay apart: the rules engine depends on nothing but Python itself."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

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
