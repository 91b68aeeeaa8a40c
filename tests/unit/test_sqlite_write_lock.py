"""One way to write under SQLite's lock: BEGIN IMMEDIATE for every transaction, no retry loops.

The concurrency tests (tests/integration/test_threads_concurrency.py, the racing quota tests
in tests/integration/test_threads_quotas.py) show that racing writers are serialized; these
check that the rule is set where it must be and that no module grows its own retry again.
"""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings

PRODUCT = Path(__file__).resolve().parents[2] / "knowledgeweb"
# A retry on SQLite's lock: an except clause that looks for "locked" in the error's text.
_RETRY = re.compile(r"""["']locked["']\s+(?:not\s+)?in\s+str\(""")


def test_sqlite_transactions_begin_immediate() -> None:
    database = settings.DATABASES["default"]
    if database["ENGINE"] != "django.db.backends.sqlite3":
        assert "transaction_mode" not in database.get("OPTIONS", {})
        return
    assert database["OPTIONS"]["transaction_mode"] == "IMMEDIATE"


def test_no_module_retries_on_database_is_locked() -> None:
    offenders = [
        str(path.relative_to(PRODUCT.parent))
        for path in sorted(PRODUCT.rglob("*.py"))
        if _RETRY.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_pattern_finds_the_retry_it_replaced() -> None:
    assert _RETRY.search('if attempt == 40 or "locked" not in str(exc):')
    assert _RETRY.search("return 'locked' in str(exc)")
