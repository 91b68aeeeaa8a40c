"""Every reference into the docs resolves: links, ``docs/….md#anchor`` mentions, no numbered sections.

Checked in the README and ``docs/`` (markdown links, relative to the file) and in the code,
tests, benchmarks, templates and static files (``docs/….md`` paths, from the repository's
root): the file exists and an ``#anchor`` names a heading of it (GitHub's slugs). A section
sign followed by a number fails anywhere: no document numbers its sections, so such
a reference can never resolve.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
CODE_FOLDERS = ("knowledgeweb", "tests", "bench", "templates", "static")
CODE_SUFFIXES = {".py", ".html", ".js", ".css", ".txt"}
_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")
# A docs path as a reference: not inside a longer path ("/srv/docs/…") and not a quoted
# string (test data titled "docs/guide.md").
_CODE_REF = re.compile(r"(?<![\w/\"'])(docs/[\w./-]+\.md)(#[\w-]+)?")
_CODE_SPAN = re.compile(r"`+[^`]*`+")
_SECTION_NUMBER = re.compile("\N{SECTION SIGN}" + r"\s*\d")
_FENCE = re.compile(r"^(```|~~~)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line.strip()):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        base = slug(line.lstrip("#"))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def _problem(source: str, target: Path, anchor: str) -> str | None:
    shown = target.relative_to(ROOT) if target.is_relative_to(ROOT) else target
    if not target.exists():
        return f"{source}: {shown} does not exist"
    if anchor and target.suffix == ".md" and anchor not in anchors(target):
        return f"{source}: no heading '#{anchor}' in {shown}"
    return None


def _code_files() -> list[Path]:
    files = [ROOT / "Makefile", ROOT / "pyproject.toml"]
    for folder in CODE_FOLDERS:
        files += [p for p in sorted((ROOT / folder).rglob("*")) if p.suffix in CODE_SUFFIXES and p.is_file()]
    return files


def test_every_link_in_the_docs_resolves() -> None:
    problems = []
    for path in DOCS:
        fenced = False
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _FENCE.match(line.strip()):
                fenced = not fenced
            if fenced:
                continue
            for target in _LINK.findall(_CODE_SPAN.sub("", line)):
                if re.match(r"^[a-z]+:", target):
                    continue  # http(s), mailto: not ours to check
                file_part, _, anchor = target.partition("#")
                resolved = (path.parent / file_part).resolve() if file_part else path
                if problem := _problem(f"{path.relative_to(ROOT)}:{number}", resolved, anchor):
                    problems.append(problem)
    assert problems == [], "\n".join(problems)


def test_every_docs_path_named_in_code_resolves() -> None:
    problems = []
    for path in [*_code_files(), *DOCS]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for file_part, anchor in _CODE_REF.findall(line):
                if "NNNN" in file_part:
                    continue  # the records' naming pattern, not a reference
                source = f"{path.relative_to(ROOT)}:{number}"
                if problem := _problem(source, ROOT / file_part, anchor.lstrip("#")):
                    problems.append(problem)
    assert problems == [], "\n".join(problems)


def test_no_reference_names_a_numbered_section() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in [*_code_files(), *DOCS]
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _SECTION_NUMBER.search(line)
    ]
    assert found == [], "\n".join(found)


def test_the_checks_catch_what_they_are_for(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# The path of a search\n\n## Every refusal under `/api/` in the API's words\n")
    assert anchors(page) == {"the-path-of-a-search", "every-refusal-under-api-in-the-apis-words"}
    assert _problem("x", page, "the-path-of-a-search") is None
    assert _problem("x", page, "the-path-of-a-question") is not None
    assert _problem("x", tmp_path / "missing.md", "") is not None
    assert _SECTION_NUMBER.search("see \N{SECTION SIGN}5")
    assert not _SECTION_NUMBER.search("see docs/contract.md")
