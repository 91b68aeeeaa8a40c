"""Chunked request bodies: refused with 411 by a server that cannot decode them, read whole otherwise.

Through a real server first: Django's development server (the one ``runserver`` uses)
runs the project's WSGI application on a free port, and httpx sends a real chunked
request. Then the WSGI application directly, with the environ gunicorn builds for a
chunked request (the body already decoded, ``wsgi.input_terminated`` set).
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.wsgi import application

BODY = json.dumps({"type": "human", "content": "Sent in chunks."}).encode()


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server(settings: Any) -> Iterator[str]:
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    httpd = ThreadedWSGIServer(("127.0.0.1", 0), QuietHandler, allow_reuse_address=False)
    httpd.set_app(application)
    runner = threading.Thread(target=httpd.serve_forever, daemon=True)
    runner.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def chunks() -> Iterator[bytes]:
    # An iterator body makes httpx send Transfer-Encoding: chunked and no Content-Length.
    yield BODY[:10]
    yield BODY[10:]


@pytest.mark.django_db(transaction=True)
def test_the_development_server_refuses_a_chunked_body_with_411_and_writes_nothing(
    server: str, thread: Thread, api_token: str
) -> None:
    url = f"{server}/api/threads/{thread.id}/messages"
    headers = {"Authorization": f"Bearer {api_token}", "Content-Type": "application/json"}
    with httpx.Client(timeout=10) as client:
        response = client.post(url, content=chunks(), headers=headers)
        assert response.request.headers["transfer-encoding"] == "chunked"
        assert "content-length" not in response.request.headers
        assert response.status_code == 411
        assert response.json() == {
            "detail": "A chunked request body (Transfer-Encoding: chunked) cannot be read by this server: "
            "send the body with a Content-Length header. Nothing was read or written.",
            "code": "length_required",
        }
        assert len(response.headers["X-Request-ID"]) == 32
        # The unread chunks must not be taken for the next request: the server closes.
        assert response.headers["connection"] == "close"
        assert Message.objects.count() == 0
        # The same body with a Content-Length goes through the same server.
        sized = client.post(url, content=BODY, headers=headers)
    assert sized.status_code == 201, sized.text
    assert Message.objects.get().content == "Sent in chunks."


@pytest.mark.django_db(transaction=True)
def test_a_chunked_form_post_outside_the_api_gets_a_plain_411(server: str) -> None:
    response = httpx.post(
        f"{server}/accounts/login/", content=iter([b"username=a&", b"password=b"]), timeout=10
    )
    assert response.status_code == 411
    assert response.headers["content-type"].startswith("text/plain")
    assert "send the body with a Content-Length header" in response.text


# --- the environ a decoding server (gunicorn) builds -------------------------------------------


@pytest.fixture
def same_connection() -> Iterator[None]:
    # As Django's test client does: a request must not close the test's own connection.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def call(path: str, body: bytes, token: str, **environ: Any) -> tuple[str, dict[str, str], bytes]:
    """Call the WSGI application as a server that decoded the chunks would."""
    base: dict[str, Any] = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "SCRIPT_NAME": "",
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1",
        "HTTP_AUTHORIZATION": f"Bearer {token}",
        "HTTP_TRANSFER_ENCODING": "chunked",
        "CONTENT_TYPE": "application/json",
        "wsgi.input": io.BytesIO(body),
        "wsgi.input_terminated": True,
        "wsgi.url_scheme": "http",
        "wsgi.errors": io.StringIO(),
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
    }
    base.update(environ)
    seen: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        seen["status"], seen["headers"] = status, dict(headers)

    content = b"".join(application(base, start_response))
    return seen["status"], seen["headers"], content


@pytest.fixture
def wsgi_settings(settings: Any, same_connection: None) -> Any:
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    return settings


@pytest.mark.django_db
def test_a_body_the_server_decoded_is_read_with_its_real_length(
    wsgi_settings: Any, thread: Thread, api_token: str
) -> None:
    status, _, content = call(f"/api/threads/{thread.id}/messages", BODY, api_token)
    assert status == "201 Created", content
    assert Message.objects.get().content == "Sent in chunks."


@pytest.mark.django_db
def test_a_decoded_body_past_the_limit_is_413_and_read_no_further(
    wsgi_settings: Any, thread: Thread, api_token: str
) -> None:
    wsgi_settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    stream = io.BytesIO(b" " * 5000 + BODY)
    status, headers, content = call(
        f"/api/threads/{thread.id}/messages",
        b"",
        api_token,
        **{"wsgi.input": stream, "HTTP_X_REQUEST_ID": "r-1"},
    )
    assert status == "413 Request Entity Too Large"
    assert json.loads(content) == {
        "detail": "The request body is larger than the API's limit of 1000 bytes. Nothing was written.",
        "code": "body_too_large",
    }
    assert headers["X-Request-ID"] == "r-1"
    assert stream.tell() == 1001  # the limit plus one byte, never the rest
    assert Message.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("environ", "status", "detail", "code"),
    [
        (
            {"CONTENT_LENGTH": str(len(BODY))},
            "400 Bad Request",
            "both Content-Length and Transfer-Encoding",
            "ambiguous_body_length",
        ),
        (
            {"HTTP_TRANSFER_ENCODING": "gzip, chunked"},
            "501 Not Implemented",
            "other than 'chunked'",
            "transfer_coding_not_supported",
        ),
        (
            {"wsgi.input_terminated": False},
            "411 Length Required",
            "send the body with a Content-Length header",
            "length_required",
        ),
    ],
)
def test_other_transfer_codings_are_refused_and_nothing_is_written(
    wsgi_settings: Any,
    thread: Thread,
    api_token: str,
    environ: dict[str, Any],
    status: str,
    detail: str,
    code: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level("INFO", logger="knowledgeweb.request"):
        answer, headers, content = call(f"/api/threads/{thread.id}/messages", BODY, api_token, **environ)
    assert answer == status
    body = json.loads(content)
    assert detail in body["detail"]
    assert body["code"] == code
    assert headers["Content-Type"] == "application/json"
    request_id = headers["X-Request-ID"]
    assert [r.request_id for r in caplog.records if r.name == "knowledgeweb.request"] == [request_id]  # type: ignore[attr-defined]
    assert Message.objects.count() == 0
