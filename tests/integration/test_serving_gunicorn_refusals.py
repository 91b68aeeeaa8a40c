"""Requests gunicorn refuses itself answer the API's JSON under ``/api/``, with a request id.

A real gunicorn, started with the configuration ``make serve`` uses (its worker
class included), and raw sockets: an over-long request line (414), an oversized
header or too many headers (431), an unknown transfer coding (501), a chunked body
over the API's limit (413, refused by the application's chunked-body guard) and an
unparsable request line (400). Outside ``/api/`` gunicorn's own answers stay.
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from gunicorn.config import Config  # type: ignore[import-untyped]

from tests.integration.serving_support import PRODUCTION_KEY, base_env, gunicorn, run_manage

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("refusals")
    log = folder / "gunicorn.log"
    env = base_env(
        SECRET_KEY=PRODUCTION_KEY,
        ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=f"sqlite:///{folder / 'db.sqlite3'}",
        CACHE_URL="locmem://",
        LOG_FORMAT="json",
    )
    migrated = run_manage("migrate", "--noinput", env=env)
    assert migrated.returncode == 0, migrated.stderr
    with gunicorn(env, log) as base:
        yield base, log


def exchange(base: str, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``raw`` on a fresh connection and read the answer to its end."""
    address = urlsplit(base)
    with socket.create_connection((address.hostname, address.port or 80), timeout=30) as sock:
        sock.sendall(raw)
        # A refusal may answer and close before the body is all sent: the answer is still
        # in our receive buffer, but half-closing a connection the server closed fails.
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {
        name.strip().lower(): value.strip() for name, value in (line.split(":", 1) for line in lines[1:])
    }
    return status, headers, body


def assert_api_json(
    status: int, headers: dict[str, str], body: bytes, code: str, log: Path
) -> dict[str, str]:
    assert headers["content-type"] == "application/json"
    answer = json.loads(body)
    assert answer["code"] == code
    assert answer["detail"]
    request_id = headers["x-request-id"]
    assert len(request_id) == 32
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert any(line.get("request_id") == request_id and line.get("status") == status for line in lines), (
        lines[-5:]
    )
    return dict(answer)


def request(target: str, *headers: str, body: bytes = b"") -> bytes:
    lines = [f"POST {target} HTTP/1.1", "Host: 127.0.0.1", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def test_an_over_long_request_line_under_the_api_is_414_json(served: tuple[str, Path]) -> None:
    base, log = served
    status, headers, body = exchange(base, request("/api/threads?q=" + "a" * 9000, "Content-Length: 0"))
    assert status == 414
    answer = assert_api_json(status, headers, body, "request_line_too_long", log)
    assert f"limit of {Config().limit_request_line} bytes" in answer["detail"]


def test_an_oversized_header_under_the_api_is_431_json(served: tuple[str, Path]) -> None:
    base, log = served
    status, headers, body = exchange(
        base, request("/api/threads", "X-Big: " + "b" * 9000, "Content-Length: 0")
    )
    assert status == 431
    answer = assert_api_json(status, headers, body, "headers_too_large", log)
    assert f"{Config().limit_request_field_size} bytes per header" in answer["detail"]


def test_too_many_headers_under_the_api_is_431_json(served: tuple[str, Path]) -> None:
    base, log = served
    many = [f"X-H{n}: v" for n in range(120)]
    status, headers, body = exchange(base, request("/api/threads", *many, "Content-Length: 0"))
    assert status == 431
    assert_api_json(status, headers, body, "headers_too_large", log)


@pytest.mark.parametrize("coding", ["gzip, chunked", "foo"])
def test_an_unknown_transfer_coding_under_the_api_is_501_json(served: tuple[str, Path], coding: str) -> None:
    base, log = served
    status, headers, body = exchange(base, request("/api/threads", f"Transfer-Encoding: {coding}"))
    assert status == 501
    assert_api_json(status, headers, body, headers_code(json.loads(body)), log)


def headers_code(answer: dict[str, str]) -> str:
    # gunicorn refuses the coding itself (501 not_implemented), or lets the application's
    # chunked-body guard refuse it (transfer_coding_not_supported): either is the API's JSON.
    assert answer["code"] in {"not_implemented", "transfer_coding_not_supported"}
    return answer["code"]


def test_a_chunked_body_over_the_limit_under_the_api_is_413_json(served: tuple[str, Path]) -> None:
    base, log = served
    size = 3 * 1024 * 1024
    chunked = f"{size:x}\r\n".encode() + b"x" * size + b"\r\n0\r\n\r\n"
    status, headers, body = exchange(
        base,
        request(
            "/api/threads/00000000-0000-0000-0000-000000000000/messages",
            "Transfer-Encoding: chunked",
            "Content-Type: application/json",
            body=chunked,
        ),
    )
    assert status == 413
    assert_api_json(status, headers, body, "body_too_large", log)


def test_an_unparsable_request_line_under_the_api_is_400_json(served: tuple[str, Path]) -> None:
    base, log = served
    status, headers, body = exchange(base, b"GET /api/threads HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n")
    assert status == 400
    assert_api_json(status, headers, body, "bad_request", log)


def test_outside_the_api_gunicorn_answers_as_it_always_did(served: tuple[str, Path]) -> None:
    base, _ = served
    status, headers, body = exchange(base, request("/threads/?q=" + "a" * 9000, "Content-Length: 0"))
    assert status == 414
    assert headers["content-type"] == "text/html"
    assert b"<html>" in body


def test_both_length_headers_under_the_api_are_400_json(served: tuple[str, Path]) -> None:
    base, log = served
    status, headers, body = exchange(
        base, request("/api/threads", "Content-Length: 2", "Transfer-Encoding: chunked", body=b"0\r\n\r\n")
    )
    assert status == 400
    answer = json.loads(body)
    assert answer["code"] in {"bad_request", "ambiguous_body_length"}
    assert_api_json(status, headers, body, answer["code"], log)
