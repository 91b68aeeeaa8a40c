"""A scriptable OpenAI-compatible chat-completions server for the composer's tests.

Written from OpenAI's public API reference (``POST /v1/chat/completions``): without
``stream`` it answers one ``chat.completion`` object; with ``stream: true`` it answers
``text/event-stream``, a ``data: {chat.completion.chunk}`` event per piece (a role
chunk first, content deltas, a chunk carrying ``finish_reason``), then ``data: [DONE]``.
Errors are ``{"error": {"message", "type", "code"}}`` with their HTTP status.

Each test gives a *responder*: a function from the request body to a ``Reply`` that
says what to send and how to misbehave (stall, stop early, send garbage, redirect).
Standard library only; it runs in a thread of the test process on a free port. The
chunks and completion bodies are those of the LightRAG tests' deterministic stand-in
(``tests.standins.openai_server``), so both speak one wire format; this server adds
scripted answers and faults, which that one (answering by rules) has no use for.
"""

from __future__ import annotations

import json
import re
import select
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from time import sleep
from typing import Any

from tests.standins.openai_server import completion_body, completion_chunks

_SOURCE = re.compile(r"^\[(\d+)\] handle: (\S+)$", re.MULTILINE)


@dataclass
class Reply:
    text: str = ""
    status: int = 200
    error_message: str = ""
    finish_reason: str | None = "stop"
    #: Content pieces sent before the server stops sending (holding the connection open).
    stall_after: int | None = None
    #: Content pieces sent before the connection is closed with no finish and no [DONE].
    truncate_after: int | None = None
    #: Content pieces sent before the server waits for ``release`` (then it carries on).
    pause_after: int | None = None
    #: Content pieces sent before a data line that is not JSON.
    malformed_after: int | None = None
    #: Seconds before the response's first byte (a model's time to first token).
    first_byte_delay: float = 0.0
    piece_delay: float = 0.0
    #: Answer one JSON chat.completion even when a stream was asked for.
    json_body: bool = False
    location: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    #: Send the text in pieces of this many characters (default: word by word).
    piece_chars: int | None = None


Responder = Callable[[dict[str, Any]], Reply]


def sources_in(body: dict[str, Any]) -> list[tuple[int, str]]:
    """The numbered sources (number, handle) the composer listed in its system message."""
    system = "\n".join(m.get("content", "") for m in body.get("messages", []) if m.get("role") == "system")
    return [(int(number), handle) for number, handle in _SOURCE.findall(system)]


def excerpt_of(body: dict[str, Any], handle: str) -> str:
    system = body["messages"][0]["content"]
    block = system.split(f"handle: {handle}\n", 1)[1]
    return block.split("excerpt:\n", 1)[1].split("\n\n[", 1)[0]


def citing_model(body: dict[str, Any]) -> Reply:
    """A model that answers from what it was given: one sentence per source, each cited correctly."""
    lines = []
    for number, handle in sources_in(body):
        first = excerpt_of(body, handle).split(". ")[0].rstrip(".")
        lines.append(f"{first} [citation:{number}](#{handle}).")
    return Reply(text=" ".join(lines) or "The sources say nothing about this.")


class ChatStandin(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, responder: Responder, api_key: str | None, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.responder = responder
        self.api_key = api_key
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []
        #: Set to let stalled responses end (the tests' cleanup does).
        self.release = threading.Event()
        #: Set by a handler when its client went away mid-stream.
        self.client_gone = threading.Event()
        #: Set when a chat request has arrived.
        self.asked = threading.Event()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet about clients that hung up (the composer closes a stream it no longer needs)."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: ChatStandin
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        length = self.headers.get("Content-Length", "0")
        raw = self.rfile.read(int(length)) if length.isdigit() else b""
        self.server.authorizations.append(self.headers.get("Authorization"))
        if (
            self.server.api_key is not None
            and self.headers.get("Authorization") != f"Bearer {self.server.api_key}"
        ):
            self._json(
                401,
                {
                    "error": {
                        "message": "Incorrect API key provided.",
                        "type": "invalid_request_error",
                        "code": "invalid_api_key",
                    }
                },
            )
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._json(
                404,
                {
                    "error": {
                        "message": f"Unknown path {self.path}.",
                        "type": "invalid_request_error",
                        "code": None,
                    }
                },
            )
            return
        body = json.loads(raw)
        self.server.requests.append(body)
        self.server.asked.set()
        reply = self.server.responder(body)
        if reply.first_byte_delay:
            sleep(reply.first_byte_delay)
        if reply.location:
            self.send_response(reply.status)
            self.send_header("Location", reply.location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if reply.status != 200:
            self._json(
                reply.status,
                {"error": {"message": reply.error_message, "type": "server_error", "code": None}},
            )
            return
        model = body.get("model", "standin")
        if reply.json_body or not body.get("stream"):
            completion = completion_body(model, reply.text, 0)
            completion["choices"][0]["finish_reason"] = reply.finish_reason
            self._json(200, completion)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        try:
            self._stream(reply, model)
        except (BrokenPipeError, ConnectionResetError):
            self.server.client_gone.set()

    def _stream(self, reply: Reply, model: str) -> None:
        for event in _events(reply, model):
            if event is None:  # stall: hold the connection open without a byte
                self._hold()
                self.close_connection = True
                return
            if event == b"pause":
                self.server.release.wait(30)
                continue
            if event == b"":  # truncate: end the body without finishing the answer
                self._chunk(b"")
                self.close_connection = True
                return
            self._chunk(event)
            if reply.piece_delay:
                sleep(reply.piece_delay)
        self._chunk(b"")

    def _hold(self) -> None:
        """Send nothing until released or until the client closes the connection (then say so)."""
        while not self.server.release.is_set():
            readable, _, _ = select.select([self.connection], [], [], 0.05)
            if readable:
                try:
                    gone = not self.connection.recv(1, socket.MSG_PEEK)
                except OSError:
                    gone = True
                if gone:
                    self.server.client_gone.set()
                    return

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def _events(reply: Reply, model: str) -> Iterator[bytes | None]:
    """The LightRAG tests' stand-in's chunks (one wire format for both), with this reply's faults."""
    chunks = list(completion_chunks(model, "", 0))
    role, finish = chunks[0], chunks[-1]
    finish["choices"][0]["finish_reason"] = reply.finish_reason
    if reply.piece_chars:
        size = reply.piece_chars
        texts = [reply.text[i : i + size] for i in range(0, len(reply.text), size)]
    else:
        texts = re.findall(r"\S+\s*|\s+", reply.text)
    pieces = (
        {**role, "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
        for text in texts
    )

    def data(chunk: dict[str, Any]) -> bytes:
        return f"data: {json.dumps(chunk)}\n\n".encode()

    yield data(role)
    for number, piece in enumerate(pieces):
        if number == reply.stall_after:
            yield None
            return
        if number == reply.pause_after:
            yield b"pause"
        if number == reply.truncate_after:
            yield b""
            return
        if number == reply.malformed_after:
            yield b"data: {this is not json\n\n"
        yield data(piece)
    yield data(finish)
    yield b"data: [DONE]\n\n"


@contextmanager
def serve(
    responder: Responder = citing_model, *, api_key: str | None = None, port: int = 0
) -> Iterator[ChatStandin]:
    server = ChatStandin(responder, api_key, port)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), name="chat-standin", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
