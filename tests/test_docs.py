"""The documents hold together (#74 items 3-4): every link leads somewhere,
the record's index lists each entry once, the code names only entries that
exist, and results.md stays the present (at most :data:`RESULTS_LINES`
lines, as ``test_layers`` holds a module to 600)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "docs" / "record"
#: results.md shows each current figure once; the story goes to the record.
RESULTS_LINES = 250

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
ENTRY = re.compile(r"docs/record/[\w.-]+\.md")


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives a document's headings: lower case, spaces to
    hyphens, punctuation but hyphens and underscores dropped.

    >>> sorted(anchors("# The table's screen\\n## Race to 65 (`./run bench`)"))
    ['race-to-65-run-bench', 'the-tables-screen']
    """
    found = set()
    fence = False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        heading = re.match(r"#{1,6} (.*)", line)
        if heading and not fence:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower())
            found.add(slug.replace(" ", "-"))
    return found


def broken_links(document: Path) -> list[str]:
    """The links of ``document`` to a file that is not there, or to a heading
    its file does not have (web addresses are not followed)."""
    broken = []
    for target in LINK.findall(document.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (document.parent / path).resolve() if path else document
        if not file.exists() or (anchor and file.suffix == ".md" and anchor not in anchors(
                file.read_text(encoding="utf-8"))):
            broken.append(target)
    return broken


def lines_over(document: Path, limit: int) -> int:
    """How many lines ``document`` has beyond ``limit`` (0 when within it)."""
    return max(0, len(document.read_text(encoding="utf-8").splitlines()) - limit)


def test_every_link_in_the_documents_leads_somewhere() -> None:
    broken = {str(d.relative_to(ROOT)): b for d in _documents() if (b := broken_links(d))}
    assert broken == {}


def test_the_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# A heading\n", encoding="utf-8")
    document = tmp_path / "doc.md"
    document.write_text("[ok](other.md#a-heading) [gone](gone.md) [no](other.md#nowhere) "
                        "[web](https://example.org/x.md)\n", encoding="utf-8")
    assert broken_links(document) == ["gone.md", "other.md#nowhere"]


def test_the_record_s_index_lists_every_entry_once() -> None:
    rows = [line for line in (RECORD / "README.md").read_text(encoding="utf-8").splitlines()
            if line.startswith("| 20")]  # | date | issue | what | entry |
    listed = [LINK.findall(row)[-1] for row in rows]
    entries = sorted(p.name for p in RECORD.glob("*.md") if p.name != "README.md")
    assert sorted(listed) == entries
    for entry in entries:  # each entry is a document of its own, titled
        assert (RECORD / entry).read_text(encoding="utf-8").startswith("# ")


def test_the_code_names_only_record_entries_that_exist() -> None:
    named: dict[str, list[str]] = {}
    for folder in ("referee", "harness", "training", "benchmarks", "tests", "scripts"):
        for file in (ROOT / folder).rglob("*"):
            if file.suffix in (".py", ".toml", ".sh") and file.is_file():
                for entry in ENTRY.findall(file.read_text(encoding="utf-8")):
                    named.setdefault(entry, []).append(str(file.relative_to(ROOT)))
    assert named, "the code names record entries (the check has something to check)"
    assert {e: f for e, f in named.items() if not (ROOT / e).exists()} == {}


def test_results_md_shows_the_present_in_at_most_250_lines(tmp_path: Path) -> None:
    assert lines_over(ROOT / "docs" / "results.md", RESULTS_LINES) == 0
    longer = tmp_path / "results.md"
    longer.write_text("a figure\n" * (RESULTS_LINES + 3), encoding="utf-8")
    assert lines_over(longer, RESULTS_LINES) == 3


# --- words a test keeps true (#84 item 5) -----------------------------------------------

#: Backticked tokens taken as the repository's paths: under one of its
#: folders, or a bare file name with one of these endings.
TOP = ("referee/", "harness/", "training/", "benchmarks/", "tests/", "scripts/", "docs/",
       ".ci/")
FILE_NAME = re.compile(r"[\w.-]+\.(py|toml|md|sh|js|css|html|tsv|json|txt)")
TICKED = re.compile(r"`([^`\s]+)`")
#: A README table cell longer than this is a paragraph: say it in docs/.
CELL = 200


def _tracked() -> tuple[set[str], set[str]]:
    """The repository's files (paths from the root) and their names."""
    import subprocess

    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    return set(listed), {Path(p).name for p in listed}


def missing_paths(text: str, files: set[str], names: set[str]) -> list[str]:
    """The backticked paths of ``text`` that name no tracked file or folder:
    ``referee/x.py:12`` or ``x.py::name`` is looked up as ``referee/x.py``;
    ``<game>``, ``NAME`` and ``*`` stand for any part of a name; a bare file
    name must be some tracked file's.

    >>> missing_paths("`referee/session.py:5` `docs/gone.md` `session.py` `gone.py`",
    ...               {"referee/session.py", "docs/a.md"}, {"session.py", "a.md"})
    ['docs/gone.md', 'gone.py']
    """
    import fnmatch

    folders = {str(parent) + "/" for p in files for parent in Path(p).parents}
    missing = []
    for token in TICKED.findall(text):
        path = re.sub(r"(:\d+(-\d+)?)+$|::.*$", "", token)
        if path.startswith(TOP):
            pattern = re.sub(r"<[^>]+>|\b[A-Z]{2,}\b", "*", path)
            if not any(fnmatch.fnmatchcase(p, pattern) for p in (*files, *folders)):
                missing.append(token)
        elif FILE_NAME.fullmatch(path) and not fnmatch.filter(
                names, re.sub(r"<[^>]+>|\b[A-Z]{2,}\b", "*", path)):
            missing.append(token)
    return missing


def test_every_backticked_path_in_the_docs_is_in_the_repository() -> None:
    """A path in README or docs/ (not the record: it tells the past) names a
    file or folder that is there: files move, sentences stay. Paths the code
    writes (``models/``, ``cache/``, a log) are no repository paths."""
    files, names = _tracked()
    documents = [d for d in _documents() if RECORD not in d.parents]
    stale = {str(d.relative_to(ROOT)): m for d in documents
             if (m := missing_paths(d.read_text(encoding="utf-8"), files, names))}
    assert stale == {}


def contract_rows(text: str) -> dict[str, list[str]]:
    """The table of docs/architecture.md's "What a game provides" (the one
    headed "capability | hooks | what for"): each row's class of
    :mod:`referee.games.base` (the first backticked name of its first cell)
    and its hooks (backticked in the second)."""
    lines = text.splitlines()
    start = lines.index("| capability | hooks | what for |") + 2
    rows = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        first, hooks = line.split("|")[1:3]
        owner = re.search(r"`(\w+)`", first)
        rows[owner.group(1) if owner else first.strip()] = TICKED.findall(hooks)
    return rows


def misplaced(rows: dict[str, list[str]]) -> dict[str, list[str]]:
    """The hooks of ``rows`` that the class of :mod:`referee.games.base`
    their row names does not define (as a method, a field or an attribute)."""
    from referee.games import base

    wrong = {owner: [h for h in hooks if h not in vars(getattr(base, owner))
                     and h not in getattr(getattr(base, owner), "__annotations__", {})]
             for owner, hooks in rows.items()}
    return {owner: hooks for owner, hooks in wrong.items() if hooks}


def test_the_contract_table_lists_each_class_s_hooks_and_every_hook_the_brain_asks() -> None:
    """Each hook of the architecture's table is a member of the class of
    ``games/base.py`` its row names, defined there; and every member of
    the contract's protocols (what the brain asks) is in some row."""
    import inspect

    from referee.games import contract

    rows = contract_rows((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    assert set(rows) == {"GameCore", "TalkDefaults", "PolicyDefaults", "ChanceDefaults",
                         "PrivacyDefaults", "GameSpec"}
    assert misplaced(rows) == {}
    asked = {name for protocol in (contract.Core, contract.Talk, contract.Policy,
                                   contract.ChanceAtTable, contract.Privacy)
             for name, _ in inspect.getmembers(protocol) if not name.startswith("_")}
    asked |= {name for protocol in (contract.Core,) for name in protocol.__annotations__}
    listed = {hook for hooks in rows.values() for hook in hooks}
    assert sorted(asked - listed) == []


def test_the_contract_check_finds_a_hook_in_the_wrong_row() -> None:
    rows = contract_rows("| capability | hooks | what for |\n|---|---|---|\n"
                         "| core (`GameCore`) | `name`, `begin` | x |\n"
                         "| talk (`TalkDefaults`) | `answer` | y |\n\nafter\n")
    assert rows == {"GameCore": ["name", "begin"], "TalkDefaults": ["answer"]}
    assert misplaced(rows) == {"GameCore": ["begin"], "TalkDefaults": ["answer"]}


def long_cells(text: str) -> list[str]:
    """The table cells of ``text`` longer than :data:`CELL` characters."""
    return [cell.strip()[:60] + "..." for line in text.splitlines() if line.startswith("|")
            for cell in line.split("|")[1:-1] if len(cell.strip()) > CELL]


def test_the_readme_s_cells_stay_short() -> None:
    """The README says what a user can do in a line each; the story of each
    issue is in the record (its status cells had grown to 584 characters)."""
    assert long_cells((ROOT / "README.md").read_text(encoding="utf-8")) == []
    assert long_cells("| a | " + "word " * 60 + "|\n") == ["word " * 12 + "..."]


def test_the_protocol_s_overview_names_every_input_and_output() -> None:
    """protocol.py's opening table and list name each message the brain is
    told and answers with (it once lacked two)."""
    import typing

    from referee import protocol

    overview = protocol.__doc__ or ""
    messages = [*typing.get_args(protocol.Input), *typing.get_args(protocol.Output)]
    assert len(messages) > 20
    assert [m.__name__ for m in messages if f":class:`{m.__name__}`" not in overview] == []


def constant_rows(text: str) -> list[tuple[str, str, str]]:
    """The rows of hearing.md's table of constants: name, value, file."""
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if len(cells) == 4 and re.fullmatch(r"`[A-Z_]+`", cells[0]) and cells[2].endswith(".py`"):
            rows.append((cells[0].strip("`"), cells[1], cells[2].strip("`")))
    return rows


def wrong_constants(rows: list[tuple[str, str, str]]) -> list[str]:
    """The rows whose file has no such constant, or another value."""
    import importlib

    wrong = []
    for name, value, file in rows:
        module = importlib.import_module(file.removesuffix(".py").replace("/", "."))
        if float(getattr(module, name, "nan")) != float(value):
            wrong.append(name)
    return wrong


def test_hearing_s_table_of_constants_is_the_code_s() -> None:
    """docs/hearing.md lists the constants a decision turns on, each with its
    value and file: a value changed or a constant moved shows here."""
    rows = constant_rows((ROOT / "docs" / "hearing.md").read_text(encoding="utf-8"))
    assert len(rows) >= 15
    assert wrong_constants(rows) == []
    assert wrong_constants([("PRIOR", "2.0", "referee/speech/hearing/decision.py"),
                            ("PRIOR", "3.0", "referee/gate.py")]) == ["PRIOR", "PRIOR"]


def test_the_hearing_page_is_one_topic_a_newcomer_reads() -> None:
    """How an utterance becomes a decision, in one page of at most 250 lines
    (it had grown to 872, reference, decisions, measurements and history in
    one); the ears, training and the record have pages of their own."""
    assert lines_over(ROOT / "docs" / "hearing.md", 250) == 0
