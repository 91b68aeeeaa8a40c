"""``manage.py mcp_server`` refuses bad lines as the HTTP transport refuses bad bodies.

A real subprocess on stdio, fed raw bytes: garbage gets a JSON-RPC Parse error, JSON
that is no JSON-RPC message an Invalid Request error (with its id), invalid UTF-8 a
Parse error (never stored with U+FFFD), and a 50 MB line an Invalid Request error
while it is read: the process's peak memory with that line stays within a few MiB of
its peak without it. The session carries on after each refusal, and only the valid
call writes anything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import mcp_types as types
import pytest

from knowledgeweb.threads.models import Thread
from tests.mcp.conftest import ROOT, Setup, SharedDatabase

pytestmark = pytest.mark.mcp

BIG = 50 * 1024 * 1024
LIMIT = 2 * 1024 * 1024


def _call(request_id: int, title: str | bytes) -> bytes:
    if isinstance(title, str):
        title = json.dumps(title).encode()[1:-1]
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"create_thread","arguments":{"title":"'
        % request_id
        + title
        + b'"}}}\n'
    )


def _initialize() -> list[bytes]:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": types.LATEST_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "1"},
        },
    }
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    return [json.dumps(init).encode() + b"\n", json.dumps(done).encode() + b"\n"]


def _big_line() -> Iterator[bytes]:
    """A 50 MB create_thread call, written in 1 MiB pieces (never held whole here either)."""
    yield b'{"jsonrpc":"2.0","id":90,"method":"tools/call","params":{"name":"create_thread","arguments":{"title":"'
    piece = b"x" * (1024 * 1024)
    for _ in range(BIG // len(piece)):
        yield piece
    yield b'"}}}\n'


def _session(
    shared_db: SharedDatabase, token: str, lines: list[bytes | str], last_id: int
) -> tuple[list[dict[str, Any]], int, str]:
    """Run the server on ``lines`` ("big" stands for the 50 MB line) until it answers
    ``last_id``; its answers, peak RSS (KiB, the kernel's accounting of the child) and stderr."""
    process = subprocess.Popen(
        [sys.executable, "manage.py", "mcp_server"],
        cwd=ROOT,
        env=shared_db.environment(KNOWLEDGEWEB_TOKEN=token),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    answers: list[dict[str, Any]] = []
    answered = threading.Event()
    errors: list[bytes] = []

    def read_answers() -> None:
        for raw in process.stdout or []:
            if raw.strip():
                answers.append(json.loads(raw))
                if answers[-1].get("id") == last_id:
                    answered.set()
        answered.set()  # the server stopped: whatever it said is all there is

    out = threading.Thread(target=read_answers)
    err = threading.Thread(target=lambda: errors.append(process.stderr.read()))  # type: ignore[union-attr]
    out.start()
    err.start()
    try:
        for line in lines:
            for data in _big_line() if line == "big" else [line]:
                assert isinstance(data, bytes)
                process.stdin.write(data)
            process.stdin.flush()
        # An event, not a pause: the answer to the last call, or the server's end.
        assert answered.wait(timeout=120)
        process.stdin.close()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if process.returncode is None:
            process.kill()
            process.wait()
    out.join()
    err.join()
    return answers, usage.ru_maxrss, b"".join(errors).decode("utf-8", "replace")


def _by_id(answers: list[dict[str, Any]]) -> dict[Any, list[dict[str, Any]]]:
    found: dict[Any, list[dict[str, Any]]] = {}
    for answer in answers:
        found.setdefault(answer.get("id"), []).append(answer)
    return found


def test_bad_lines_get_json_rpc_errors_and_nothing_is_written(
    setup: Setup, shared_db: SharedDatabase
) -> None:
    shared_db.hand_over()
    lines: list[bytes | str] = [
        *_initialize(),
        b"this is not json\n",
        b"\n",
        b'{"id": 7, "greeting": "hello"}\n',
        b"[1, 2\n",
        _call(8, b"Invalid \xff\xfe UTF-8"),
        _call(9, "A valid thread"),
    ]
    try:
        answers, _, stderr = _session(shared_db, setup.alice_token, lines, 9)
    finally:
        shared_db.take_back()
    by_id = _by_id(answers)
    assert by_id[1][0]["result"]["serverInfo"]
    # Three refusals without an id: garbage, truncated JSON, invalid UTF-8 (in that order).
    anonymous = [answer["error"] for answer in by_id[None]]
    assert [error["code"] for error in anonymous] == [types.PARSE_ERROR] * 3
    assert [error["data"]["code"] for error in anonymous] == ["invalid_json", "invalid_json", "invalid_utf8"]
    assert anonymous[2]["data"] == {
        "detail": "The message is not valid UTF-8 (byte 109). Nothing was written.",
        "code": "invalid_utf8",
        "status": 400,
    }
    assert by_id[7][0]["error"]["code"] == types.INVALID_REQUEST
    assert by_id[7][0]["error"]["data"]["code"] == "invalid_request"
    assert 8 not in by_id  # refused before it was a call: it has no id to answer with
    assert by_id[9][0]["result"]["structuredContent"]["title"] == "A valid thread"
    assert list(Thread.objects.values_list("title", flat=True)) == ["A valid thread"]
    assert not Thread.objects.filter(title__contains="\ufffd").exists()
    assert "mcp stdio line refused: invalid_utf8" in stderr


def test_a_50_mb_line_is_refused_while_it_is_read(setup: Setup, shared_db: SharedDatabase) -> None:
    shared_db.hand_over()
    try:
        small, small_peak, _ = _session(shared_db, setup.alice_token, [*_initialize(), _call(9, "Before")], 9)
        answers, peak, _ = _session(
            shared_db, setup.alice_token, [*_initialize(), _call(9, "Before"), "big", _call(10, "After")], 10
        )
    finally:
        shared_db.take_back()
    by_id = _by_id(answers)
    refusal = by_id[None][0]["error"]
    assert refusal["code"] == types.INVALID_REQUEST
    assert refusal["data"] == {
        "detail": f"The message is larger than the limit of {LIMIT} bytes. Nothing was read or written.",
        "code": "body_too_large",
        "status": 413,
    }
    assert by_id[10][0]["result"]["structuredContent"]["title"] == "After"
    assert sorted(Thread.objects.values_list("title", flat=True)) == ["After", "Before", "Before"]
    assert _by_id(small)[9][0]["result"]
    # Held: the limit plus one byte and a read buffer, not 50 MB (nor its decoded copies).
    assert peak - small_peak < 16 * 1024, (small_peak, peak)
