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
