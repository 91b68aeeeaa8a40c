"""A database that refuses connections, or has too few, degrades the service and it recovers.

A real gunicorn (the configuration ``make serve`` uses) in front of the real PostgreSQL,
through a TCP proxy the test opens, closes and limits (``ConnectionProxy``). Requests
are counted, never timed: while the database refuses, every request answers 503 with
``Retry-After`` and the log holds one line per kind of failure (no traceback); once it
accepts again, every request succeeds; with room for only two connections, requests
answer 200 or 503 (never 500) and one at a time all succeed, because no idle thread
holds a connection. Start-up warns when workers x threads exceed ``max_connections``.

Runs on PostgreSQL at 127.0.0.1:5432 (``KNOWLEDGEWEB_PG_ADMIN_URL`` to point elsewhere),
in a database of its own named after the test run's.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import pytest

from tests.integration.serving_support import (
    PRODUCTION_KEY,
    ConnectionProxy,
    base_env,
    gunicorn,
    run_manage,
)

pytestmark = pytest.mark.slow

ADMIN_URL = os.environ.get("KNOWLEDGEWEB_PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")


def _database_name() -> str:
    own = urlsplit(os.environ.get("DATABASE_URL", ""))
    base = (
        own.path.lstrip("/") if own.scheme.startswith("postgres") and own.path.strip("/") else "knowledgeweb"
    )
    return f"{base}_pressure"


def _url(name: str, port: int | None = None) -> str:
    admin = urlsplit(ADMIN_URL)
    netloc = admin.netloc if port is None else admin.netloc.rsplit(":", 1)[0] + f":{port}"
    return urlunsplit((admin.scheme, netloc, f"/{name}", "", ""))


@dataclass
class Served:
    base: str
    token: str
    proxy: ConnectionProxy
    log: Path

    def lines(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.startswith("{")]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    try:
        admin = psycopg.connect(ADMIN_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.skip(f"No PostgreSQL at {urlsplit(ADMIN_URL).hostname}: {exc}")
    name = _database_name()
    with admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    folder = tmp_path_factory.mktemp("pressure")
    direct = base_env(SECRET_KEY=PRODUCTION_KEY, ALLOWED_HOSTS="127.0.0.1", DATABASE_URL=_url(name))
    assert run_manage("migrate", "--noinput", env=direct).returncode == 0
    made = run_manage(
        "shell",
        "-c",
        "from django.contrib.auth.models import User\n"
        "from knowledgeweb.accounts.services import token_create\n"
        "print(token_create(user=User.objects.create_user('alice'), name='pressure')[1])",
        env=direct,
    )
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip().splitlines()[-1]
    admin_parts = urlsplit(ADMIN_URL)
    with ConnectionProxy((admin_parts.hostname or "127.0.0.1", admin_parts.port or 5432)) as proxy:
        log = folder / "gunicorn.log"
        env = base_env(
            SECRET_KEY=PRODUCTION_KEY,
            ALLOWED_HOSTS="127.0.0.1",
            DATABASE_URL=_url(name, proxy.port),
            CACHE_URL="locmem://",
            LOG_FORMAT="json",
            WEB_WORKERS="2",
            WEB_THREADS="4",
            # Longer than the test: every repeat of a kind is left out of the log.
            DB_FAILURE_LOG_INTERVAL="600",
        )
        with gunicorn(env, log) as base:
            yield Served(base=base, token=token, proxy=proxy, log=log)
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _statuses(served: Served, count: int, *, at_once: int) -> list[httpx.Response]:
    """``count`` requests that need the database (the token check reads it), ``at_once`` in flight."""

    def one(_: int) -> httpx.Response:
        return httpx.get(
            f"{served.base}/api/threads", headers={"Authorization": f"Bearer {served.token}"}, timeout=60
        )

    with ThreadPoolExecutor(max_workers=at_once) as pool:
        return list(pool.map(one, range(count)))


def _until(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    """Wait for an event (polling), failing with ``what`` if it does not come."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_refused_then_reopened_every_request_fails_cleanly_then_succeeds(served: Served) -> None:
    before = _statuses(served, 24, at_once=8)
    assert [r.status_code for r in before] == [200] * 24
    # Between requests no thread holds a connection.
    _until(lambda: served.proxy.active == 0, "idle threads kept their database connections")

    served.proxy.refuse()
    down = _statuses(served, 30, at_once=6)
    assert [r.status_code for r in down] == [503] * 30
    assert {r.json()["code"] for r in down} == {"database_unavailable"}
    assert {r.headers["Retry-After"] for r in down} == {"5"}
    assert all(r.headers["X-Request-ID"] for r in down)

    served.proxy.open()
    after = _statuses(served, 40, at_once=8)
    assert [r.status_code for r in after] == [200] * 40

    text = served.log.read_text()
    assert "Traceback" not in text
    failures = [line for line in served.lines() if str(line["message"]).startswith("Database unavailable")]
    # One line per kind per process (two workers), whatever the number of failed requests.
    kinds = [str(line["message"]).split(")")[0] for line in failures]
    assert 1 <= len(failures) <= 2 * len(set(kinds)), failures
    assert len(set(kinds)) <= 2, kinds


def test_with_room_for_two_connections_requests_degrade_and_one_at_a_time_all_succeed(served: Served) -> None:
    served.proxy.limit(2)
    try:
        burst = _statuses(served, 24, at_once=8)
        assert {r.status_code for r in burst} <= {200, 503}
        assert any(r.status_code == 200 for r in burst)
        _until(lambda: served.proxy.active == 0, "idle threads kept their database connections")
        steady = _statuses(served, 16, at_once=1)
        assert [r.status_code for r in steady] == [200] * 16
    finally:
        served.proxy.open()


def test_start_up_does_not_warn_when_threads_fit_the_database(served: Served) -> None:
    assert "request threads may each hold a database connection" not in served.log.read_text()


def test_start_up_warns_when_workers_times_threads_exceed_max_connections(
    served: Served, tmp_path: Path
) -> None:
    with psycopg.connect(_url(_database_name()), autocommit=True) as direct:
        row = direct.execute("SHOW max_connections").fetchone()
    assert row is not None
    threads = int(row[0]) // 2 + 1
    log = tmp_path / "gunicorn.log"
    env = base_env(
        SECRET_KEY=PRODUCTION_KEY,
        ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=_url(_database_name(), served.proxy.port),
        CACHE_URL="locmem://",
        WEB_WORKERS="2",
        WEB_THREADS=str(threads),
    )
    with gunicorn(env, log):
        text = log.read_text()
    assert f"WEB_WORKERS x WEB_THREADS = 2 x {threads} = {2 * threads} request threads" in text
    assert f"max_connections {row[0]}" in text
