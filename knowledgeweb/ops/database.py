"""When the database refuses connections: answer 503 at once, log one line per kind, recover.

The connection policy (docs/decisions/0030-database-pressure.md): every request opens
its connection when it first needs one and closes it when it ends
(``CONN_MAX_AGE = 0``). No thread holds a connection while idle, so a process never
holds more connections than requests in flight, a thread never reuses one that
died while the database was away, and the first request after the database accepts
connections again gets a fresh one. The price is a connection set-up per request
(about a millisecond on a local socket).

A request whose connection fails answers 503 with ``Retry-After`` (JSON under
``/api/``), and each *kind* of failure (connection refused, too many connections,
connection lost, …) is logged as one line, without a traceback, at most once per
``DB_FAILURE_LOG_INTERVAL`` seconds; the next line says how many were left out. The
server's start-up compares workers x threads with the database's
``max_connections`` (``capacity_warning``).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import Error as DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger(__name__)

#: Seconds a client is told to wait before trying again.
RETRY_AFTER = 5
#: Connections kept free beyond the superusers' reserve: migrations, a shell, probes.
CONNECTION_MARGIN = 5

# What each kind of connection failure says (psycopg's and SQLite's messages), first match wins.
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "too many connections",
        re.compile(r"too many (clients|connections)|connection slots are reserved", re.I),
    ),
    ("connection refused", re.compile(r"connection refused", re.I)),
    ("connect timeout", re.compile(r"timeout expired|timed out", re.I)),
    ("database starting or stopping", re.compile(r"database system is (starting up|shutting down)", re.I)),
    (
        "connection lost",
        re.compile(
            r"server closed the connection|connection (is|already) closed|consuming input failed"
            r"|terminating connection|connection reset|broken pipe|no connection to the server|"
            r"server conn crashed|lost synchronization",
            re.I,
        ),
    ),
    ("cannot connect", re.compile(r"connection failed|could not connect|could not translate host", re.I)),
    ("cannot open", re.compile(r"unable to open database file", re.I)),
)


def unavailable_kind(exc: BaseException) -> str | None:
    """The kind of connection failure ``exc`` is, or ``None`` for any other error."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, DatabaseError) or type(current).__module__.startswith(("psycopg", "sqlite3")):
            message = str(current)
            for kind, pattern in _KINDS:
                if pattern.search(message):
                    return kind
        current = current.__cause__ or current.__context__
    return None


@dataclass
class _Seen:
    logged_at: float
    left_out: int = 0


class FailureLog:
    """One line per kind per interval, counting the lines left out (shared by a process's threads)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._kinds: dict[str, _Seen] = {}

    def reset(self) -> None:
        """Forget what was logged (a test starts a fresh interval)."""
        with self._lock:
            self._kinds.clear()

    def admit(self, kind: str) -> int | None:
        """The number of lines left out since the last one, when a line for ``kind`` may be
        written now; ``None`` when it is left out."""
        interval = float(getattr(settings, "DB_FAILURE_LOG_INTERVAL", 10.0))
        now = self._clock()
        with self._lock:
            seen = self._kinds.get(kind)
            if seen is not None and now - seen.logged_at < interval:
                seen.left_out += 1
                return None
            left_out = seen.left_out if seen is not None else 0
            self._kinds[kind] = _Seen(logged_at=now)
            return left_out


failure_log = FailureLog()


def describe(kind: str, exc: BaseException, left_out: int) -> str:
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    interval = float(getattr(settings, "DB_FAILURE_LOG_INTERVAL", 10.0))
    more = f" ({left_out} more in the last {interval:g} s, not logged)" if left_out else ""
    return f"Database unavailable ({kind}): {first_line}{more}"


def log_unavailable(kind: str, exc: BaseException) -> None:
    """Log one line for this failure, unless one of its kind was logged within the interval."""
    left_out = failure_log.admit(kind)
    if left_out is not None:
        logger.error(describe(kind, exc, left_out))


class DatabaseFailureLogFilter(logging.Filter):
    """Any record carrying a connection failure (Django's request logger, a handler's
    ``logger.exception``) becomes the one throttled line, without its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is None:
            return True
        kind = unavailable_kind(exc)
        if kind is None:
            return True
        left_out = failure_log.admit(kind)
        if left_out is None:
            return False
        record.msg = describe(kind, exc, left_out)
        record.args = None
        record.exc_info = None
        record.exc_text = None
        return True


def unavailable_response(request: HttpRequest, kind: str) -> HttpResponse:
    """503 with ``Retry-After``: JSON with a code under ``/api/``, a short text elsewhere."""
    detail = f"The database is unavailable ({kind}); try again in a few seconds. Nothing was written."
    response: HttpResponse
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": detail, "code": "database_unavailable"}, status=503)
    else:
        response = HttpResponse(detail + "\n", status=503, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(RETRY_AFTER)
    # Logged once per kind and interval above, not once per request by Django.
    response._has_been_logged = True  # type: ignore[attr-defined]
    return response


class DatabaseUnavailableMiddleware:
    """A view that fails to reach the database answers 503 and logs one throttled line."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        kind = unavailable_kind(exception)
        if kind is None:
            return None
        log_unavailable(kind, exception)
        return unavailable_response(request, kind)


def capacity_warning(*, workers: int, threads: int, max_connections: int, reserved: int) -> str | None:
    """A warning when the server's threads could ask for more connections than the database
    has room for (``max_connections`` less the superusers' reserve and a margin)."""
    needed = workers * threads
    room = max_connections - reserved - CONNECTION_MARGIN
    if needed <= room:
        return None
    return (
        f"WEB_WORKERS x WEB_THREADS = {workers} x {threads} = {needed} request threads may each hold a "
        f"database connection, but the database has room for {room} (max_connections {max_connections}, "
        f"less {reserved} reserved for superusers and a margin of {CONNECTION_MARGIN} for commands and "
        "probes): past that, requests answer 503 under load. Lower WEB_WORKERS or WEB_THREADS, or raise "
        "the database's max_connections."
    )


def check_capacity(*, workers: int, threads: int) -> str | None:
    """Ask the database for its connection limit and compare (PostgreSQL only; SQLite has none).

    Returns the warning, or ``None``; a database that cannot be asked is reported as such.
    """
    from django.db import connections

    connection = connections["default"]
    if connection.vendor != "postgresql":
        return None
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW max_connections")
            max_connections = int(cursor.fetchone()[0])
            cursor.execute("SHOW superuser_reserved_connections")
            reserved = int(cursor.fetchone()[0])
    except DatabaseError as exc:
        return f"Could not read the database's max_connections to compare with {workers} x {threads} threads ({unavailable_kind(exc) or type(exc).__name__})."
    finally:
        connection.close()
    return capacity_warning(
        workers=workers, threads=threads, max_connections=max_connections, reserved=reserved
    )
