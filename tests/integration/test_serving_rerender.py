"""The server starts without re-rendering and re-renders after start, with progress in its log.

A real gunicorn over the real configuration (``make serve``'s), on a SQLite file whose every
stored render was made before renderer versions existed (version 0: never served as stored).
"""

from __future__ import annotations

import importlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from knowledgeweb.threads.rendering.version import RENDERER_VERSION
from tests.integration.serving_support import PRODUCTION_KEY, PYTHON, ROOT, base_env, free_port, run_manage

STARTUP = 240  # a busy 2-core machine


@pytest.fixture
def database(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    db = tmp_path / "db.sqlite3"
    env = base_env(
        DEBUG="1",
        # gunicorn refuses to start without them, DEBUG or not (docs/operations.md#serving-in-production).
        SECRET_KEY=PRODUCTION_KEY,
        ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=f"sqlite:///{db}",
        CACHE_URL="locmem://",
    )
    for args in (("migrate", "--noinput"), ("demo",)):
        done = run_manage(*args, env=env)
        assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE threads_messagerender SET renderer_version = 0")
    return db, env


def _versions(db: Path) -> dict[int, int]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT renderer_version, COUNT(*) FROM threads_messagerender GROUP BY 1")
        return dict(rows.fetchall())


def test_the_server_listens_first_and_re_renders_in_the_background(
    database: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    db, env = database
    stale = _versions(db)
    assert list(stale) == [0]
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen(  # noqa: S603 - our own interpreter and configuration
            [PYTHON, "-m", "gunicorn", "-c", "python:knowledgeweb.ops.gunicorn_conf"],
            cwd=ROOT,
            env={**env, "HOST": "127.0.0.1", "PORT": str(port), "WEB_WORKERS": "1", "WEB_THREADS": "2"},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + STARTUP
        # The event that ends the wait: the rerender's closing line.
        while "message(s) rendered in" not in log.read_text():
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)

    text = log.read_text()
    listening = text.index("Listening at")
    started = text.index("Re-rendering stored renders in the background")
    progress = text.index("] 1/")
    finished = text.index(f"Renderer version {RENDERER_VERSION}: {stale[0]} message(s) rendered in")
    assert listening < started < progress < finished
    assert _versions(db) == {RENDERER_VERSION: stale[0]}


class _Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, message: str, *args: Any) -> None:
        self.lines.append(message % args)


class _Server:
    def __init__(self) -> None:
        self.log = _Log()


def test_the_background_rerender_can_be_left_to_the_deploy(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[list[str]] = []
    monkeypatch.setattr(subprocess, "Popen", lambda args, **kwargs: started.append(args))
    # The configuration sets defaults in the environment when loaded: load it over a copy.
    monkeypatch.setattr(
        os,
        "environ",
        {
            **os.environ,
            "RERENDER_AFTER_START": "0",
            "SECRET_KEY": PRODUCTION_KEY,
            "ALLOWED_HOSTS": "127.0.0.1",
        },
    )
    monkeypatch.delitem(sys.modules, "knowledgeweb.ops.gunicorn_conf", raising=False)
    gunicorn_conf = importlib.import_module("knowledgeweb.ops.gunicorn_conf")
    server = _Server()

    # The re-render step alone: when_ready also asks PostgreSQL for its connection limit,
    # which the served test above exercises against a real server.
    gunicorn_conf.rerender_in_the_background(server)

    assert started == []
    assert server.log.lines == []
