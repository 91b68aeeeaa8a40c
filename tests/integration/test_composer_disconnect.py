"""A client that goes away leaves nothing, even while the model is silent (issue 22, defect 6).

Over a real WSGI server and a raw socket: the browser sends the streamed Ask, reads
the first event and hangs up while the model says nothing. The stream's heartbeat (an
SSE comment every second) is the write at which the server notices; the turn is
closed, the model call is cancelled (the model server sees its connection close long
before the model's 30-second timeout) and nothing is written.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.bindings.services import binding_create
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.composer.services import HEARTBEAT_SECONDS, turn_events, turn_prepare
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest
from knowledgeweb.threads.models import Message, Thread
from tests.integration.serving_support import PRODUCTION_KEY, PYTHON, ROOT, base_env, free_port, run_python
from tests.standins.chat_server import ChatStandin, Reply, serve

#: Long enough that only the disconnect can end the call within the test's wait.
MODEL_TIMEOUT = 30


def _asker(django_user_model: Any) -> User:
    user: User = django_user_model.objects.create_user("walker", password="walker-password-1")
    binding_create(name="local", provider="local", tools=["knowledge_search"], users=[user])
    document_ingest(
        collection=collection_get_or_create(name="birds"),
        source_key="k",
        content_hash="k",
        title="Kingfisher note",
        source_url="",
        chunks=[ChunkDraft("Kingfishers dive for fish from a perch. They nest in river banks.")],
    )
    return user


def _model(server: ChatStandin, user: User) -> None:
    model = AnswerModel(name="m", base_url=server.base_url, model="silent-1", timeout=MODEL_TIMEOUT)
    model.full_clean()
    model.save()
    model.users.add(user)


def _raw_stream_request(live_url: str, user: User) -> tuple[tuple[str, int], bytes]:
    """The server's address and a complete streamed-Ask request, as a browser would send it."""
    login = Client()
    login.force_login(user)
    session = login.cookies["sessionid"].value
    # Cookies are Secure off DEBUG and this server is plain HTTP: send them by hand.
    csrf = httpx.get(live_url + "/ask/", cookies={"sessionid": session}).cookies["csrftoken"]
    body = urlencode(
        {"question": "kingfishers", "binding": "local", "composer": "m", "csrfmiddlewaretoken": csrf}
    ).encode()
    address = urlsplit(live_url)
    host, port = address.hostname or "127.0.0.1", address.port or 80
    head = (
        f"POST /ask/stream/ HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Cookie: sessionid={session}; csrftoken={csrf}\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\nAccept: text/event-stream\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return (host, port), head.encode() + body


@pytest.mark.parametrize(
    "reply",
    [
        # Silent from the first byte of its answer on.
        Reply(text="Kingfishers dive for fish. " * 5, stall_after=0),
        # One sentence, then silent.
        Reply(text="Kingfishers dive for fish. " * 5, stall_after=6),
    ],
    ids=["silent", "silent-after-a-sentence"],
)
def test_a_raw_socket_disconnect_while_the_model_is_silent_cancels_the_call_and_writes_nothing(
    live_server: Any, django_user_model: Any, reply: Reply
) -> None:
    user = _asker(django_user_model)
    with serve(lambda body: reply) as server:
        _model(server, user)
        address, request = _raw_stream_request(live_server.url, user)
        received = b""
        with socket.create_connection(address, timeout=10) as browser:
            browser.sendall(request)
            while b"event: start" not in received:
                chunk = browser.recv(4096)
                assert chunk, received
                received += chunk
            # Once the model has been asked (and is silent), the browser hangs up.
            assert server.asked.wait(10)
        # The next heartbeat fails to reach the browser; the turn ends and cancels the model
        # call, whose connection the model server sees close (at the latest after two beats).
        assert server.client_gone.wait(MODEL_TIMEOUT / 3)

    assert b"HTTP/1.1 200" in received
    assert Thread.objects.count() == 0
    assert Message.objects.count() == 0


def test_heartbeats_come_while_the_model_is_silent(db: None, django_user_model: Any) -> None:
    """In process: a silent model yields heartbeats (the writes a server needs), then closing the
    turn cancels the call at once and records nothing."""
    user = _asker(django_user_model)
    with serve(lambda body: Reply(text="Kingfishers dive. " * 3, stall_after=0)) as server:
        _model(server, user)
        prepared = turn_prepare(
            user=user, question="kingfishers", binding_name="local", rate_key=None, composer="m"
        )
        events = turn_events(prepared, heartbeat=HEARTBEAT_SECONDS / 20)
        kinds = [next(events).kind for _ in range(3)]
        events.close()
        assert server.client_gone.wait(MODEL_TIMEOUT / 3)

    assert kinds == ["heartbeat"] * 3
    assert Thread.objects.count() == 0
    assert Message.objects.count() == 0


# --- the production server: gunicorn's threaded workers -------------------------------------

_SETUP = """
import django
django.setup()
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
from django.core.management import call_command
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest
call_command("migrate", verbosity=0)
user = User.objects.create_user("walker", password="walker-password-1")
binding_create(name="local", provider="local", tools=["knowledge_search"], users=[user])
document_ingest(collection=collection_get_or_create(name="birds"), source_key="k", content_hash="k",
    title="Kingfisher note", source_url="",
    chunks=[ChunkDraft("Kingfishers dive for fish from a perch. They nest in river banks.")])
model = AnswerModel(name="m", base_url={base_url!r}, model="silent-1", timeout={timeout})
model.full_clean()
model.save()
model.users.add(user)
session = SessionStore()
session["_auth_user_id"] = str(user.pk)
session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
session["_auth_user_hash"] = user.get_session_auth_hash()
session.create()
print(session.session_key)
"""

_COUNT = """
import django
django.setup()
from knowledgeweb.threads.models import Message, Thread
print(Thread.objects.count(), Message.objects.count())
"""


def test_gunicorn_notices_a_raw_socket_disconnect_while_the_model_is_silent(tmp_path: Path) -> None:
    port = free_port()
    env = base_env(
        SECRET_KEY=PRODUCTION_KEY,
        ALLOWED_HOSTS="127.0.0.1",
        HOST="127.0.0.1",
        PORT=str(port),
        WEB_WORKERS="1",
        WEB_THREADS="4",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        CACHE_URL="locmem://",
        STATIC_ROOT=str(tmp_path / "static"),
        DJANGO_SETTINGS_MODULE="knowledgeweb.settings",
    )
    with serve(lambda body: Reply(text="Kingfishers dive for fish. " * 5, stall_after=0)) as server:
        setup = run_python(_SETUP.format(base_url=server.base_url, timeout=MODEL_TIMEOUT), env)
        assert setup.returncode == 0, setup.stderr
        session = setup.stdout.strip().splitlines()[-1]
        log = (tmp_path / "gunicorn.log").open("w")
        gunicorn = subprocess.Popen(  # noqa: S603 - our own interpreter's gunicorn
            [PYTHON, "-m", "gunicorn", "-c", "python:knowledgeweb.ops.gunicorn_conf"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_until_up(base, gunicorn)
            # A CSRF secret of our own: Django accepts a 32-character secret as cookie and token
            # (no page is fetched, so the test needs no collected static files).
            csrf = secrets.token_hex(16)
            body = urlencode(
                {"question": "kingfishers", "binding": "local", "composer": "m", "csrfmiddlewaretoken": csrf}
            ).encode()
            request = (
                f"POST /ask/stream/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Cookie: sessionid={session}; csrftoken={csrf}\r\n"
                "Content-Type: application/x-www-form-urlencoded\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            ).encode() + body
            received = b""
            with socket.create_connection(("127.0.0.1", port), timeout=10) as browser:
                browser.sendall(request)
                while b"event: start" not in received:
                    chunk = browser.recv(4096)
                    assert chunk, received
                    received += chunk
                assert server.asked.wait(10)
            # The worker's next heartbeat fails; the turn ends and cancels the silent model call.
            assert server.client_gone.wait(MODEL_TIMEOUT / 3), (tmp_path / "gunicorn.log").read_text()
        finally:
            os.killpg(gunicorn.pid, signal.SIGTERM)
            gunicorn.wait(timeout=60)
            log.close()

    counted = run_python(_COUNT, env)
    assert counted.returncode == 0, counted.stderr
    assert counted.stdout.split() == ["0", "0"]
    assert b"HTTP/1.1 200" in received


def _wait_until_up(base: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, "gunicorn exited"
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)  # start-up only: polling for the server to listen
    raise AssertionError("gunicorn did not start")
