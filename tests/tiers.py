"""The suite's tiers: which folder holds which tier, and the marker each of its files carries.

A tier is a folder of tests that need something the fast loop does not start (a browser, a
real LightRAG server, an MCP server process, a live provider). Each file there declares its
tier with a module-level ``pytestmark``, so ``-m`` selects the tiers exactly: ``make
test-fast`` leaves them out, ``make test`` runs the browser tier last in its own process.
A file that forgets its marker would slip into the wrong run; tests/conftest.py stops the
run at collection, and tests/unit/test_tiers.py reads every tier file's source.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

TESTS = Path(__file__).resolve().parent

#: tier folder (under tests/) -> the marker every test file in it declares
TIER_FOLDERS = {
    "e2e": "e2e",
    "lightrag_real": "real_lightrag",
    "mcp": "mcp",
    "live": "live",
    # Celery worker processes on Redis, against PostgreSQL (a database every process sees).
    "celery": "celery",
    # Real clients from a cached environment of their own: langchain-mcp-adapters with the 1.x
    # MCP SDK in a LangGraph agent, openapi-python-client (tests/interop/installation.py).
    "interop": "interop",
}

#: Folders whose tests `make pytest-postgres` runs again on PostgreSQL and Redis: they carry
#: the ``postgres`` marker by folder (tests/conftest.py adds it), others may opt in with it.
POSTGRES_FOLDERS = ("integration", "mcp", "celery")

#: What `make test-fast` leaves out of tests/unit and tests/integration.
FAST_EXCLUDES = ("slow", *TIER_FOLDERS.values())
FAST_MARKEXPR = " and ".join(f"not {name}" for name in FAST_EXCLUDES)

#: The share of the unit and integration tests that `make test-fast` must run.
FAST_MINIMUM_SHARE = 0.9


def tier_of(path: Path) -> str | None:
    """The marker a test file at ``path`` must carry, or None outside the tier folders."""
    try:
        relative = path.resolve().relative_to(TESTS)
    except ValueError:
        return None
    if len(relative.parts) < 2 or not relative.name.startswith("test_"):
        return None
    return TIER_FOLDERS.get(relative.parts[0])


def marker_names(marks: object) -> set[str]:
    """The marker names in a ``pytestmark`` value: one mark, or a list or tuple of them."""
    values: Iterable[object] = marks if isinstance(marks, list | tuple) else [marks]
    return {name for mark in values if isinstance(name := getattr(mark, "name", None), str)}


def declared_in_source(source: str) -> set[str]:
    """The ``pytest.mark.NAME`` markers a module assigns to ``pytestmark`` at its top level."""
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if not any(isinstance(target, ast.Name) and target.id == "pytestmark" for target in targets):
            continue
        for sub in ast.walk(value):
            # pytest.mark.NAME, called (pytest.mark.NAME(...)) or not
            if (
                isinstance(sub, ast.Attribute)
                and isinstance(sub.value, ast.Attribute)
                and sub.value.attr == "mark"
                and isinstance(sub.value.value, ast.Name)
                and sub.value.value.id == "pytest"
            ):
                names.add(sub.attr)
    return names


def unmarked_tier_files(root: Path = TESTS) -> list[tuple[Path, str]]:
    """Every test file in a tier folder whose source does not declare its tier's marker."""
    missing = []
    for folder, marker in TIER_FOLDERS.items():
        for path in sorted((root / folder).rglob("test_*.py")):
            if marker not in declared_in_source(path.read_text()):
                missing.append((path, marker))
    return missing


def missing_marker_message(missing: Iterable[tuple[str, str]]) -> str:
    lines = [f"  {path}: add `pytestmark = pytest.mark.{marker}`" for path, marker in missing]
    return "Test files in a tier folder without their tier's marker:\n" + "\n".join(lines)


def counted_folder(path: Path) -> bool:
    """Whether a test at ``path`` counts towards the fast loop's share: tests/unit, tests/integration."""
    try:
        relative = path.resolve().relative_to(TESTS)
    except ValueError:
        return False
    return len(relative.parts) > 1 and relative.parts[0] in {"unit", "integration"}


def fast_share_report(selected: int, total: int, ran: int) -> tuple[bool, str]:
    """Whether the fast loop ran enough of the unit and integration tests, and the line saying so.

    ``ran`` counts the tests that reported an outcome: every selected test must have one (a
    scheduler that drops tests would otherwise go unnoticed).
    """
    share = ran / total if total else 0.0
    ok = total > 0 and ran == selected and share >= FAST_MINIMUM_SHARE
    verdict = "met" if ok else "MISSED"
    dropped = "" if ran == selected else f"; {selected - ran:,} selected tests reported nothing"
    return ok, (
        f"fast loop: ran {ran:,} of {total:,} unit and integration tests ({share:.1%}; "
        f"at least {FAST_MINIMUM_SHARE:.0%} required; {selected:,} selected{dropped}): {verdict}"
    )
