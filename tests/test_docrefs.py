"""The words in step with the code (#74 item 3): every ``:mod:``, ``:class:``,
``:func:``, ``:meth:``, ``:attr:``, ``:data:`` and ``:exc:`` a docstring or
comment of the package names is there.

A name is looked up as Sphinx would look it up, and a little more kindly:
as a full dotted path (a module of the package, or of the project's own
``harness``, ``training`` and ``benchmarks``); from the module it is written
in; as a member of a class of that module (a method, a field, or an
attribute its methods set on ``self``); or, first part first, as the one
class of that name in the package (a name imported only for typing)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from functools import cache
from types import ModuleType
from typing import Any

import pytest

import referee

ROLE = re.compile(r":(mod|class|func|meth|attr|data|exc):`~?([A-Za-z_][\w.]*)`")


@cache
def _modules() -> tuple[ModuleType, ...]:
    return tuple(importlib.import_module(info.name)
                 for info in pkgutil.walk_packages(referee.__path__, "referee.")
                 if not info.name.endswith("__main__"))


@cache
def _classes() -> dict[str, list[type]]:
    """Every class defined in the package, by name."""
    found: dict[str, list[type]] = {}
    for module in _modules():
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__:
                found.setdefault(name, []).append(cls)
    return found


def _member(owner: Any, name: str) -> tuple[bool, Any]:
    """Whether ``owner`` has ``name`` (for a class: also a field it declares
    or an attribute its methods set), and what it is (None if unknown)."""
    if hasattr(owner, name):
        return True, getattr(owner, name)
    if inspect.isclass(owner):
        for cls in owner.__mro__:
            if name in getattr(cls, "__annotations__", {}):
                return True, None
            try:
                source = inspect.getsource(cls)
            except (OSError, TypeError):
                continue
            if re.search(rf"\bself\.{re.escape(name)}\b\s*(:[^=\n]*)?=", source):
                return True, None
    return False, None


def _chain(start: Any, parts: list[str]) -> bool:
    owner = start
    for part in parts:
        if owner is None:
            return True  # (a field's own members are not checked)
        ok, owner = _member(owner, part)
        if not ok:
            return False
    return True


def resolves(module: ModuleType, name: str) -> bool:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):  # a full dotted path
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        if _chain(found, parts[cut:]):
            return True
    if _chain(module, parts):
        return True
    if len(parts) == 1 and any(_member(cls, name)[0] for _, cls in inspect.getmembers(
            module, inspect.isclass) if cls.__module__ == module.__name__):
        return True
    return any(_chain(cls, parts[1:]) for cls in _classes().get(parts[0], []))


def stale_references() -> list[str]:
    stale = []
    for module in _modules():
        path = getattr(module, "__file__", None)
        if not path:
            continue
        with open(path, encoding="utf-8") as source:
            text = source.read()
        for match in ROLE.finditer(text):
            role, name = match.groups()
            if not resolves(module, name):
                line = text.count("\n", 0, match.start()) + 1
                stale.append(f"{module.__name__}:{line}: :{role}:`{name}`")
    return stale


@pytest.mark.slow
def test_every_reference_in_the_package_s_docstrings_is_there():
    assert stale_references() == []


def test_the_check_finds_a_reference_that_is_not_there():
    """(The check can fail: a module that does not exist, a method of a
    class that has none of that name.)"""
    module = importlib.import_module("referee.brain.clock")
    assert resolves(module, "referee.brain.clock.Clock._marks")
    assert resolves(module, "Clock._marks")
    assert resolves(module, "Clock")
    assert resolves(importlib.import_module("referee.brain.news"), "HEARTBEAT")
    assert not resolves(module, "referee.brain.replayed")
    assert not resolves(module, "Clock.hold")
    assert not resolves(module, "Session.no_such_thing")
