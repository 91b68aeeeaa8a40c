"""Real parts for the serving tests: free ports, a TCP listener that never answers,
settings loaded in a child process from an environment, and `make serve` itself."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable

#: A strong, throwaway key: `check --deploy` judges the key's strength too.
PRODUCTION_KEY = "kw-serving-tests-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOP"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HungListener:
    """Accepts TCP connections and never sends a byte: a hung Redis or database."""

    def __init__(self) -> None:
        self._server = socket.socket()
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self.port = int(self._server.getsockname()[1])
        self.accepted = 0
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            self.accepted += 1
            self._held.append(conn)

    def __enter__(self) -> HungListener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.close()
        for conn in self._held:
            conn.close()


def base_env(**extra: str) -> dict[str, str]:
    """This process's environment without any of the app's settings, plus ``extra``."""
    drop = {
        "DEBUG", "SECRET_KEY", "DATABASE_URL", "CACHE_URL", "ALLOWED_HOSTS", "LOG_LEVEL", "LOG_FORMAT",
        "DJANGO_SETTINGS_MODULE", "SECURE_PROXY_SSL_HEADER", "CSRF_TRUSTED_ORIGINS", "SECURE_SSL_REDIRECT",
        "SECURE_HSTS_SECONDS", "SECURE_COOKIES", "TRUSTED_PROXY_COUNT", "STATIC_ROOT", "HOST", "PORT",
        # The browser tests' conftest sets it for Playwright; a deployment never has it.
        "DJANGO_ALLOW_ASYNC_UNSAFE",
    }  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith(("RATE_LIMIT_", "WEB_"))}
    return {**env, **extra}


def run_python(code: str, env: Mapping[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own interpreter and code
        [PYTHON, "-c", code],
        cwd=ROOT,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_manage(*args: str, env: Mapping[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own interpreter and manage.py
        [PYTHON, "manage.py", *args],
        cwd=ROOT,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def load_settings(env: Mapping[str, str], *names: str) -> dict[str, Any]:
    """The named settings as the real settings module computes them from ``env``."""
    code = (
        "import json, knowledgeweb.settings as s\n"
        f"print(json.dumps({{n: getattr(s, n) for n in {list(names)!r}}}, default=str))"
    )
    result = run_python(code, env)
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


@contextmanager
def gunicorn(env: Mapping[str, str], log: Path, *, startup: float = 120) -> Iterator[str]:
    """gunicorn as ``make serve`` runs it (its configuration module, its worker class), without
    ``make``'s migrate and collectstatic; yields the base URL once ``/healthz`` answers."""
    port = free_port()
    # No background re-render: these servers start on databases with nothing to re-render,
    # and its process would share the database with what the test is observing.
    full = {
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "WEB_WORKERS": "1",
        "WEB_THREADS": "4",
        "RERENDER_AFTER_START": "0",
        **env,
    }
    with log.open("w") as out:
        server = subprocess.Popen(  # noqa: S603 - our own interpreter and gunicorn
            [PYTHON, "-m", "gunicorn", "-c", "python:knowledgeweb.ops.gunicorn_conf"],
            cwd=ROOT,
            env=full,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup
        while True:
            assert server.poll() is None, log.read_text()
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        yield base
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)


class ConnectionProxy:
    """A TCP proxy in front of a real server (PostgreSQL) that can refuse, or limit, connections.

    ``open()`` forwards everything; ``refuse()`` drops every connection it carries and
    closes each new one at once (the database went away); ``limit(n)`` forwards at most
    ``n`` connections at a time and closes the others at once (the server is full).
    ``forwarded`` counts the connections it carried through.
    """

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(128)
        self.port = int(self._server.getsockname()[1])
        self._lock = threading.Lock()
        self._pairs: set[tuple[socket.socket, socket.socket]] = set()
        self._refusing = False
        self._limit: int | None = None
        self.forwarded = 0
        self.turned_away = 0
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def active(self) -> int:
        with self._lock:
            return len(self._pairs)

    def open(self) -> None:
        with self._lock:
            self._refusing, self._limit = False, None

    def limit(self, count: int) -> None:
        with self._lock:
            self._refusing, self._limit = False, count

    def refuse(self) -> None:
        with self._lock:
            self._refusing = True
            pairs = list(self._pairs)
        for pair in pairs:
            self._drop(pair)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                full = self._limit is not None and len(self._pairs) >= self._limit
                turn_away = self._refusing or full
                if turn_away:
                    self.turned_away += 1
            if turn_away:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            pair = (client, upstream)
            with self._lock:
                self._pairs.add(pair)
                self.forwarded += 1
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, target, pair), daemon=True).start()

    def _pump(
        self, source: socket.socket, target: socket.socket, pair: tuple[socket.socket, socket.socket]
    ) -> None:
        with suppress(OSError):
            while data := source.recv(65536):
                target.sendall(data)
        self._drop(pair)

    def _drop(self, pair: tuple[socket.socket, socket.socket]) -> None:
        with self._lock:
            if pair not in self._pairs:
                return
            self._pairs.discard(pair)
        for sock in pair:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def __enter__(self) -> ConnectionProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.close()
        self.refuse()
