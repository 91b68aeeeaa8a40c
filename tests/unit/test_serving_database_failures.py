"""Connection failures are told apart from other database errors, logged once per kind per
interval, and the start-up capacity check compares workers x threads with the database."""

from __future__ import annotations

import logging
import sys
from typing import Any

import pytest
from django.db import OperationalError, ProgrammingError

from knowledgeweb.ops.database import (
    CONNECTION_MARGIN,
    DatabaseFailureLogFilter,
    FailureLog,
    capacity_warning,
    unavailable_kind,
)


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        (
            'connection failed: connection to server at "127.0.0.1", port 5432 failed: Connection refused',
            "connection refused",
        ),
        ("connection failed: FATAL:  sorry, too many clients already", "too many connections"),
        ("consuming input failed: server closed the connection unexpectedly", "connection lost"),
        ("the connection is closed", "connection lost"),
        ("connection timeout expired", "connect timeout"),
        ("unable to open database file", "cannot open"),
    ],
)
def test_connection_failures_are_told_apart_by_kind(message: str, kind: str) -> None:
    exc = OperationalError(message)
    exc.__cause__ = RuntimeError(message)
    assert unavailable_kind(exc) == kind


@pytest.mark.parametrize(
    "exc",
    [
        OperationalError("database is locked"),
        ProgrammingError('relation "x" does not exist'),
        ValueError("refused"),
    ],
)
def test_other_errors_are_not_connection_failures(exc: Exception) -> None:
    assert unavailable_kind(exc) is None


def test_one_line_per_kind_per_interval_and_the_next_says_how_many_were_left_out(settings: Any) -> None:
    settings.DB_FAILURE_LOG_INTERVAL = 10
    now = [100.0]
    log = FailureLog(clock=lambda: now[0])
    assert log.admit("connection refused") == 0
    assert [log.admit("connection refused") for _ in range(500)] == [None] * 500
    assert log.admit("too many connections") == 0  # another kind has its own line
    now[0] += 10
    assert log.admit("connection refused") == 500
    assert log.admit("connection refused") is None


def test_the_log_filter_drops_the_traceback_and_the_repeats(settings: Any) -> None:
    settings.DB_FAILURE_LOG_INTERVAL = 600
    record_filter = DatabaseFailureLogFilter()

    def record() -> logging.LogRecord:
        try:
            raise OperationalError("connection failed: FATAL:  sorry, too many clients already")
        except OperationalError:
            return logging.LogRecord(
                "django.request", logging.ERROR, "x", 1, "Internal Server Error: /", (), sys.exc_info()
            )

    kept = [r for r in (record() for _ in range(50)) if record_filter.filter(r)]
    assert len(kept) <= 1  # another test in this process may have logged this kind already
    for r in kept:
        assert r.exc_info is None
        assert r.getMessage().startswith("Database unavailable (too many connections): ")
    plain = logging.LogRecord("x", logging.ERROR, "x", 1, "Something else", (), None)
    assert record_filter.filter(plain)


def test_the_capacity_warning_counts_the_reserve_and_a_margin() -> None:
    room = 100 - 3 - CONNECTION_MARGIN
    assert capacity_warning(workers=2, threads=room // 2, max_connections=100, reserved=3) is None
    warning = capacity_warning(workers=2, threads=room // 2 + 1, max_connections=100, reserved=3)
    assert warning is not None
    assert f"= {2 * (room // 2 + 1)} request threads" in warning
    assert f"room for {room}" in warning
