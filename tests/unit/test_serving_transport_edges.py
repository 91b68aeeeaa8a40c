"""Edges of the two transports' readers: gunicorn's failed request line, and a stdio line at the cap."""

from __future__ import annotations

import io

import pytest

from knowledgeweb.mcp_server.stdio import Line, read_line
from knowledgeweb.ops.gunicorn_worker import request_target


@pytest.mark.parametrize(
    ("head", "target"),
    [
        (b"GET /api/threads?q=aaaa", "/api/threads?q=aaaa"),  # cut short by the limit: no version
        (b"POST /api/threads HTTP/1.1\r\nHost: x\r\n", "/api/threads"),
        (b"GET http://kw.example.org/api/threads HTTP/1.1\r\n", "/api/threads"),
        (b"GET http://kw.example.org HTTP/1.1\r\n", "/"),
        (b"GARBAGE", ""),
        (b"", ""),
        (None, ""),
    ],
)
def test_the_request_target_is_read_from_the_first_bytes(head: bytes | None, target: str) -> None:
    assert request_target(head) == target


def test_a_line_at_the_cap_is_read_and_one_byte_over_is_refused_and_dropped() -> None:
    limit = 10
    stream = io.BytesIO(b"a" * 10 + b"\n" + b"b" * 11 + b"\n" + b"c" * 100_000 + b"\nlast")
    assert read_line(stream, limit) == Line(b"a" * 10)
    over = read_line(stream, limit)
    assert over is not None
    assert (over.too_long, over.data, over.size) == (True, b"", 11)
    huge = read_line(stream, limit)
    assert huge is not None
    assert (huge.too_long, huge.data, huge.size) == (True, b"", 100_000)
    # The dropped lines took nothing of the next one; a last line may lack its newline.
    assert read_line(stream, limit) == Line(b"last")
    assert read_line(stream, limit) is None


def test_a_crlf_line_loses_its_line_end() -> None:
    assert read_line(io.BytesIO(b'{"a": 1}\r\n'), 100) == Line(b'{"a": 1}')
