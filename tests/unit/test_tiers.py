"""Every tier file carries its marker, and the fast loop runs at least 90% of the unit and
integration tests (counted by collecting them as `make test-fast` does)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tiers import (
    FAST_MINIMUM_SHARE,
    TESTS,
    TIER_FOLDERS,
    declared_in_source,
    fast_share_report,
    unmarked_tier_files,
)

ROOT = TESTS.parent


def test_every_file_in_a_tier_folder_declares_its_tier() -> None:
    assert unmarked_tier_files() == []


def test_a_tier_file_without_its_marker_is_named(tmp_path: Path) -> None:
    for folder in TIER_FOLDERS:
        (tmp_path / folder).mkdir()
    (tmp_path / "e2e" / "test_marked.py").write_text("import pytest\n\npytestmark = pytest.mark.e2e\n")
    (tmp_path / "e2e" / "test_only_db.py").write_text("import pytest\n\npytestmark = pytest.mark.django_db\n")
    (tmp_path / "e2e" / "test_bare.py").write_text("def test_x() -> None:\n    pass\n")
    (tmp_path / "e2e" / "helpers.py").write_text("")  # not a test file
    (tmp_path / "mcp" / "test_listed.py").write_text(
        "import pytest\n\npytestmark = [pytest.mark.mcp, pytest.mark.django_db]\n"
    )
    (tmp_path / "mcp" / "test_other_tier.py").write_text("import pytest\n\npytestmark = pytest.mark.e2e\n")
    (tmp_path / "lightrag_real" / "test_in_a_function.py").write_text(
        "import pytest\n\ndef test_x() -> None:\n    pytestmark = pytest.mark.real_lightrag\n"
    )

    missing = {
        (path.relative_to(tmp_path).as_posix(), marker) for path, marker in unmarked_tier_files(tmp_path)
    }

    assert missing == {
        ("e2e/test_only_db.py", "e2e"),
        ("e2e/test_bare.py", "e2e"),
        ("mcp/test_other_tier.py", "mcp"),
        ("lightrag_real/test_in_a_function.py", "real_lightrag"),
    }


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("pytestmark = pytest.mark.e2e", {"e2e"}),
        ("pytestmark = [pytest.mark.real_lightrag, pytest.mark.django_db]", {"real_lightrag", "django_db"}),
        ("pytestmark = (pytest.mark.mcp, pytest.mark.django_db(transaction=True))", {"mcp", "django_db"}),
        ("pytestmark: list = [pytest.mark.live]", {"live"}),
        ("marks = pytest.mark.e2e", set()),
        ("# pytestmark = pytest.mark.e2e", set()),
    ],
)
def test_the_declared_markers_are_read_from_the_module_level_assignment(
    source: str, expected: set[str]
) -> None:
    assert declared_in_source(source) == expected


def test_the_share_is_met_at_90_percent_and_missed_below() -> None:
    assert fast_share_report(90, 100, 90) == (
        True,
        "fast loop: ran 90 of 100 unit and integration tests (90.0%; at least 90% required; 90 selected): met",
    )
    ok, line = fast_share_report(1_799, 2_000, 1_799)
    assert not ok
    assert line.endswith("(90.0%; at least 90% required; 1,799 selected): MISSED")  # 89.95% rounds up
    assert fast_share_report(0, 0, 0)[0] is False


def test_selected_tests_that_report_nothing_fail_the_fast_loop() -> None:
    """What a scheduler keying tests by node id did: ten of eleven same-id tests never ran."""
    ok, line = fast_share_report(1_977, 1_982, 1_967)
    assert not ok
    assert line == (
        "fast loop: ran 1,967 of 1,982 unit and integration tests (99.2%; at least 90% required; "
        "1,977 selected; 10 selected tests reported nothing): MISSED"
    )


def test_the_fast_loop_collects_at_least_90_percent_of_the_unit_and_integration_tests() -> None:
    """Collect exactly what `make test-fast` selects, in a process of its own."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^test-fast:.*?\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert recipe is not None
    pytest_line = next(line for line in recipe.group(1).splitlines() if "pytest" in line)
    assert "--fast" in pytest_line
    assert "tests/unit tests/integration" in pytest_line
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "DJANGO_ALLOW_ASYNC"))}

    def collected(*args: str) -> tuple[int, int]:
        # One collection (not two): it is the slowest test of the fast loop.
        result = subprocess.run(  # noqa: S603 - our own interpreter and tests
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        last = result.stdout.strip().splitlines()[-1]
        found = re.match(r"(\d+)/(\d+) tests collected \((\d+) deselected\)", last)
        assert found, last
        selected, total, deselected = map(int, found.groups())
        assert selected + deselected == total
        return selected, total

    selected, total = collected("--fast", "tests/unit", "tests/integration")
    assert total > 1_000  # both folders were collected
    assert selected / total >= FAST_MINIMUM_SHARE, (selected, total)
