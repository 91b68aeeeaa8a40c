"""Real HTTP servers on loopback for the deadline and politeness tests (and bench/deadline.py).

``TrickleServer`` speaks raw sockets so it can send a response one byte at a
time, or nothing at all, and it records what it sent and whether it saw the
client hang up. ``RagflowServer`` is a threaded ``http.server`` answering
RAGFlow's three endpoints with SYNTHETIC payloads shaped after docs/providers.md, and
counts requests per path and requests in flight. Both bind port 0.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


class TrickleServer:
    """Answers each connection with ``head`` at once, then ``trickle`` one byte every ``interval`` seconds.

    ``silent=True`` sends nothing. ``sent`` counts trickled bytes written; ``hung_up`` is
    set when the server sees the client close the connection (a failed send, or end of input).
    """

    def __init__(
        self, trickle: bytes = b"", *, head: bytes = b"", interval: float = 0.02, silent: bool = False
    ) -> None:
        self.head = head
        self.response = trickle
        self.interval = interval
        self.silent = silent
        self.sent = 0
        self.requests = 0
        self.hung_up = threading.Event()
        self.finished = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            _read_request(conn)
            self.requests += 1
            if self.silent:
                conn.settimeout(60)
                if conn.recv(1) == b"":  # blocks until the client hangs up
                    self.hung_up.set()
                return
            if self.head:
                conn.sendall(self.head)
            for byte in self.response:
                if self._stop.is_set():
                    return
                conn.sendall(bytes([byte]))
                self.sent += 1
                time.sleep(self.interval)
        except OSError:
            self.hung_up.set()  # the client closed: the send failed (EPIPE / ECONNRESET)
        finally:
            self.finished.set()
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._listener.close()


def _read_request(conn: socket.socket) -> bytes:
    conn.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head


def trickled_headers(size: int = 100_000) -> bytes:
    """A response whose header block never ends within any test's patience (send it all as ``trickle``)."""
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"a" * size


def complete_headers(size: int = 100_000) -> bytes:
    """Headers announcing a ``size``-byte JSON body (send as ``head``, then trickle the body)."""
    return f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {size}\r\n\r\n".encode()


# --- RAGFlow-shaped (synthetic) -------------------------------------------------------------


class RagflowServer:
    """A SYNTHETIC RAGFlow on loopback: datasets, document checks and retrieval.

    Every document asked for is searchable. ``delay`` holds each answer; ``gate``
    (optional) is called with the path on entry to each request, e.g. to wait at a barrier.
    """

    def __init__(
        self,
        *,
        datasets: list[dict[str, Any]],
        delay: float = 0.0,
        gate: Callable[[str], None] | None = None,
        api_key: str | None = None,
        redirect_to: str | None = None,
    ) -> None:
        self.datasets = datasets
        #: When set, a request without ``Authorization: Bearer <api_key>`` gets RAGFlow's code 109.
        self.api_key = api_key
        #: When set, every request is answered ``302 Found`` to this location.
        self.redirect_to = redirect_to
        #: Document ids answered as still parsing (``run`` RUNNING), hence not searchable.
        self.unsearchable: set[str] = set()
        self.delay = delay
        self.gate = gate
        self.paths: list[str] = []
        self.now = 0
        self.most = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                server._handle(self)

            def do_POST(self) -> None:
                server._handle(self)

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def count(self, suffix: str) -> int:
        with self.lock:
            return sum(1 for path in self.paths if path.endswith(suffix))

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
            self.paths.append(urlsplit(handler.path).path)
        try:
            length = int(handler.headers.get("Content-Length") or 0)
            raw = handler.rfile.read(length) if length else b""
            if self.gate is not None:
                self.gate(urlsplit(handler.path).path)
            if self.delay:
                time.sleep(self.delay)
            body = self._answer(handler.command, handler.path, raw)
            if self.api_key is not None and handler.headers.get("Authorization") != f"Bearer {self.api_key}":
                # RAGFlow up to v0.25 answers a bad key with HTTP 200 and code 109 (docs/providers.md).
                body = {"code": 109, "message": "Authentication error: API key is invalid!"}
        finally:
            with self.lock:
                self.now -= 1
        payload = json.dumps(body).encode()
        try:
            if self.redirect_to is not None:
                handler.send_response(302)
                handler.send_header("Location", self.redirect_to)
                handler.send_header("Content-Length", "0")
                handler.end_headers()
                return
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
        except OSError:
            pass  # the client gave up (its deadline passed)

    def _answer(self, method: str, target: str, raw: bytes) -> dict[str, Any]:
        parts = urlsplit(target)
        path = parts.path
        if method == "GET" and path == "/api/v1/datasets":
            return {"code": 0, "data": self.datasets}
        if method == "GET" and path.endswith("/documents"):
            dataset_id = path.split("/")[4]
            ids = parse_qs(parts.query).get("ids", []) or parse_qs(parts.query).get("id", [])
            docs = [
                {
                    "id": i,
                    "name": f"{i}.pdf",
                    "dataset_id": dataset_id,
                    "chunk_count": 4,
                    "run": "RUNNING" if i in self.unsearchable else "DONE",
                    "status": "1",
                }
                for i in ids
            ]
            return {"code": 0, "data": {"total": len(docs), "docs": docs}}
        if method == "POST" and path == "/api/v1/retrieval":
            question = json.loads(raw or b"{}").get("question", "")
            chunk = {
                "id": "a1b2c3d4e5f60718",
                "content": f"Synthetic chunk answering {question!r}.",
                "document_id": "d0000",
                "document_keyword": "d0000.pdf",
                "dataset_id": self.datasets[0]["id"],
                "similarity": 0.8,
                "vector_similarity": 0.9,
                "term_similarity": 0.6,
                "positions": [],
            }
            doc_aggs = [{"doc_name": "d0000.pdf", "doc_id": "d0000", "count": 1}]
            return {"code": 0, "data": {"chunks": [chunk], "doc_aggs": doc_aggs, "total": 1}}
        return {"code": 100, "message": f"no route {method} {path}"}

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        # A client that gave up at its deadline resets its connection; that is the point, not an error.
        pass


def synthetic_dataset(dataset_id: str = "dsA") -> dict[str, Any]:
    return {
        "id": dataset_id,
        "name": f"Synthetic {dataset_id}",
        "document_count": 1000,
        "chunk_count": 4000,
        "embedding_model": "BAAI/bge-m3",
        "status": "1",
    }
