"""Decision records: every record has its header fields, and the index lists every record.

Records are ``docs/decisions/NNNN-kebab-title.md``, any four-digit number (helpers write
records in ranges of their own at the same time). When a record is missing from the index,
the failure prints the exact lines to add to ``docs/decisions/README.md``.
"""

from __future__ import annotations

import re
from pathlib import Path

RECORDS = Path(__file__).resolve().parents[2] / "docs" / "decisions"
INDEX = RECORDS / "README.md"
_NAME = re.compile(r"^(\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md$")
_TITLE = re.compile(r"^# (\d{4})\. (.+)$")
_STATUS = re.compile(r"^- Status: (accepted|superseded by \[(\d{4})\]\((\d{4}-[a-z0-9-]+\.md)\))$")
_DATE = re.compile(r"^- Date: \d{4}-\d{2}-\d{2}$")


def records() -> list[Path]:
    return sorted(path for path in RECORDS.glob("*.md") if path.name != "README.md")


def index_line(path: Path) -> str:
    """The index's line for one record: its number and title, linked, and its status."""
    lines = path.read_text(encoding="utf-8").splitlines()
    title = _TITLE.match(lines[0])
    status = lines[1].removeprefix("- Status: ")
    assert title, path.name
    return f"- [{title.group(1)}. {title.group(2)}]({path.name}) — {status}"


def test_every_record_is_named_and_has_its_header_fields() -> None:
    problems = []
    for path in records():
        name = _NAME.match(path.name)
        lines = path.read_text(encoding="utf-8").splitlines()
        title = _TITLE.match(lines[0]) if lines else None
        if not name or not title or title.group(1) != name.group(1):
            problems.append(f"{path.name}: the first line must be '# NNNN. Title' with the file's number")
            continue
        if len(lines) < 3 or not _STATUS.match(lines[1]):
            problems.append(
                f"{path.name}: line 2 must be '- Status: accepted' or '- Status: superseded by [NNNN](file)'"
            )
        elif (
            (match := _STATUS.match(lines[1])) and match.group(3) and not (RECORDS / match.group(3)).exists()
        ):
            problems.append(f"{path.name}: superseded by a record that does not exist ({match.group(3)})")
        if len(lines) < 3 or not _DATE.match(lines[2]):
            problems.append(f"{path.name}: line 3 must be '- Date: YYYY-MM-DD'")
        headings = [line for line in lines if line.startswith("## ")]
        if headings[:3] != ["## Context", "## Decision", "## Consequences"]:
            problems.append(
                f"{path.name}: needs '## Context', '## Decision' and '## Consequences', in that order"
            )
    assert problems == [], "\n".join(problems)


def test_no_two_records_share_a_number() -> None:
    numbers = [path.name[:4] for path in records()]
    assert len(numbers) == len(set(numbers)), sorted(n for n in numbers if numbers.count(n) > 1)


def test_the_index_lists_every_record_as_it_reads() -> None:
    index = INDEX.read_text(encoding="utf-8").splitlines()
    missing = [index_line(path) for path in records() if index_line(path) not in index]
    assert missing == [], "add these lines to docs/decisions/README.md, in number order:\n" + "\n".join(
        missing
    )


def test_the_index_lists_nothing_that_is_not_a_record() -> None:
    listed = re.findall(r"\]\((\d{4}-[a-z0-9-]+\.md)\)", INDEX.read_text(encoding="utf-8"))
    assert [name for name in listed if not (RECORDS / name).exists()] == []
