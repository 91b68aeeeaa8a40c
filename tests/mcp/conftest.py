"""The MCP server's test set-up: a local corpus and binding, and real server processes.

A server process (``manage.py mcp_server`` on stdio, ``manage.py mcp_http`` on a free port)
cannot see pytest's in-memory SQLite database. ``SharedDatabase`` hands the test's database
over: on SQLite it copies it into a file (SQLite's backup API) that the process opens, and
copies the file back when the process has stopped, so the test's ORM and API client see
what the server wrote; on PostgreSQL the process opens the test database itself (the tests
use ``transactional_db``, so what each side writes is committed and visible to the other).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from queue import Empty, Queue
from typing import Any, TypeVar
from urllib.parse import quote

import anyio
import pytest
from django.contrib.auth.models import User
from django.db import connection
from mcp import MCPError

from knowledgeweb.accounts.models import ApiToken
from tests.factories import BindingFactory, CollectionFactory, TokenFactory, UserFactory

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 60.0

#: Three documents of the demo-like corpus; the query "owls" finds the first two.
DOCUMENTS = (
    ("Field notes", "Owls hunt at night; their hearing finds mice under snow."),
    ("Raptors", "Barn owls nest in old buildings and hunt over open fields."),
    ("Herons", "Herons wade in shallow water and eat fish."),
)
QUERY = "owls"


@dataclass(frozen=True)
class Setup:
    alice: User
    bob: User
    alice_token: str
    bob_token: str


@pytest.fixture
def setup(transactional_db: None) -> Setup:
    """Alice may search the local index through one binding; Bob has a token and no binding."""
    CollectionFactory.create(name="Nature", documents=dict(DOCUMENTS))
    alice = UserFactory.create(username="alice")
    bob = UserFactory.create(username="bob")
    BindingFactory.create(name="nature", users=[alice])
    return Setup(
        alice=alice,
        bob=bob,
        alice_token=TokenFactory.create(user=alice, name="mcp").raw,
        bob_token=TokenFactory.create(user=bob, name="mcp").raw,
    )


class SharedDatabase:
    """The test database, opened by a server process too (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.file: Path | None = None
        if connection.vendor == "sqlite":
            self.file = directory / "shared.sqlite3"

    def url(self) -> str:
        if self.file is not None:
            return f"sqlite:///{self.file}"
        s = connection.settings_dict
        credentials = quote(s["USER"], safe="")
        if s["PASSWORD"]:
            credentials += ":" + quote(s["PASSWORD"], safe="")
        return f"postgres://{credentials}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"

    def hand_over(self) -> None:
        """Before the server starts: make what the test wrote visible to it."""
        if self.file is not None:
            connection.ensure_connection()
            with sqlite3.connect(self.file) as target:
                connection.connection.backup(target)

    def take_back(self) -> None:
        """After the server stopped: make what the server wrote visible to the test."""
        if self.file is not None:
            connection.ensure_connection()
            with sqlite3.connect(self.file) as source:
                source.backup(connection.connection)

    def revoke_tokens(self, user: User) -> None:
        """Revoke ``user``'s tokens while a server runs (it must notice at the next call).

        Called from a worker thread, since the test is inside the event loop then."""
        if self.file is not None:
            with sqlite3.connect(self.file) as db:
                db.execute("UPDATE threads_apitoken SET is_active = 0 WHERE user_id = ?", (user.pk,))
        else:
            ApiToken.objects.filter(user=user).update(is_active=False)
            connection.close()  # called from a worker thread: leave no connection behind

    def environment(self, **extra: str) -> dict[str, str]:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "DATABASE_URL": self.url(),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "PYTHONUNBUFFERED": "1",
            **extra,
        }
        for name in ("KNOWLEDGEWEB_TOKEN", "KNOWLEDGEWEB_AGENT_NAME", "MCP_ALLOWED_ORIGINS"):
            if name not in extra:
                env.pop(name, None)
        return env


@pytest.fixture
def shared_db(tmp_path: Path, setup: Setup) -> SharedDatabase:
    return SharedDatabase(tmp_path)


def run_async(function: Callable[..., Awaitable[T]], *args: Any) -> T:
    """``anyio.run`` in a thread of its own: the browser tests' Playwright leaves an event loop
    running in the main thread for the rest of the session."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(anyio.run(function, *args))
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return outcome[0]


def mcp_errors(exc: BaseException) -> list[MCPError]:
    """The MCP errors in what the SDK's client raised (it raises them inside task groups)."""
    if isinstance(exc, MCPError):
        return [exc]
    if isinstance(exc, BaseExceptionGroup):
        return [found for inner in exc.exceptions for found in mcp_errors(inner)]
    return []


@dataclass
class HttpServer:
    url: str
    process: subprocess.Popen[str]
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8")


@contextmanager
def http_server(db: SharedDatabase, log: Path, **env: str) -> Iterator[HttpServer]:
    """``manage.py mcp_http --port 0`` over the shared database, stopped on exit."""
    db.hand_over()
    with log.open("w", encoding="utf-8") as err:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "mcp_http", "--host", "127.0.0.1", "--port", "0"],
            cwd=ROOT,
            env=db.environment(**env),
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    try:
        lines: Queue[str] = Queue()
        assert process.stdout is not None
        stdout = process.stdout

        def pump() -> None:
            for line in stdout:
                lines.put(line)

        threading.Thread(target=pump, daemon=True).start()
        try:
            first = lines.get(timeout=START_TIMEOUT)
        except Empty:
            pytest.fail(f"mcp_http did not start: {log.read_text(encoding='utf-8')}")
        url = first.strip().rsplit(" ", 1)[-1]
        assert url.startswith("http://127.0.0.1:"), first
        assert url.endswith("/mcp"), first
        yield HttpServer(url=url, process=process, log=log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        db.take_back()
