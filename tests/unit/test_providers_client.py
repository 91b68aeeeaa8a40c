"""The one HTTP client factory: redirects, timeouts, the 4 MiB cap, JSON, redaction."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from knowledgeweb.providers.client import (
    MAX_BODY_BYTES,
    Connection,
    ProviderSession,
    build_client,
    transport_override,
)
from knowledgeweb.providers.deadline import Deadline
from knowledgeweb.providers.errors import (
    MalformedResponseError,
    ProviderConfigurationError,
    ProviderHTTPError,
    ProviderRedirectError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    ResponseTooLargeError,
)
from tests.synthetic import RAGFLOW_KEY, RAGFLOW_URL, Upstream


def connection(upstream: Upstream, *, timeout: float = 7) -> Connection:
    return Connection(
        label="RAGFlow",
        base_url=RAGFLOW_URL,
        timeout=timeout,
        headers={"Authorization": f"Bearer {RAGFLOW_KEY}"},
        secrets=(RAGFLOW_KEY,),
        transport=upstream.transport,
    )


def get(
    upstream: Upstream,
    path: str = "/api/v1/datasets",
    *,
    timeout: float = 7,
    deadline: Deadline | None = None,
) -> object:
    with ProviderSession(connection(upstream, timeout=timeout), deadline=deadline) as session:
        return session.get(path, action="dataset list request")


def test_the_factory_never_follows_redirects_and_uses_the_given_timeout() -> None:
    client = build_client(timeout=12)
    assert client.follow_redirects is False
    assert client.timeout == httpx.Timeout(12)
    assert client.trust_env is False
    client.close()


def test_it_refuses_a_redirect_and_never_contacts_its_target() -> None:
    upstream = Upstream(
        lambda request: (
            httpx.Response(302, headers={"Location": "https://elsewhere.example.test/steal"})
            if request.url.host == "ragflow.example.test"
            else httpx.Response(200, json={"code": 0, "data": []})
        )
    )
    with pytest.raises(ProviderRedirectError, match=r"HTTP 302 \(a redirect\).*never followed"):
        get(upstream)
    assert [request.url.host for request in upstream.requests] == ["ragflow.example.test"]


def test_it_reports_a_timeout_with_the_bindings_limit() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    with pytest.raises(ProviderTimeoutError) as caught:
        get(Upstream(slow), timeout=9)
    assert str(caught.value) == (
        "RAGFlow sent no complete answer within 9 s, the binding's timeout for the whole search; "
        "it ran out while waiting for the response headers of the dataset list request."
    )
    assert caught.value.code == "provider_timeout"


def test_it_reports_an_unreachable_server() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with pytest.raises(ProviderUnavailableError, match="could not be reached"):
        get(Upstream(refuse))


def test_it_stops_reading_a_streamed_body_past_four_mebibytes() -> None:
    piece = b" " * (256 * 1024)
    produced = 0

    def endless() -> Iterator[bytes]:
        nonlocal produced
        for _ in range(256):  # 64 MiB if read to the end
            produced += 1
            yield piece

    upstream = Upstream(lambda request: httpx.Response(200, content=endless()))
    with pytest.raises(ResponseTooLargeError, match="passed the 4 MiB limit; reading stopped"):
        get(upstream)
    assert produced == MAX_BODY_BYTES // len(piece) + 1


def test_it_refuses_a_declared_length_over_the_cap_without_reading() -> None:
    produced = 0

    def body() -> Iterator[bytes]:
        nonlocal produced
        produced += 1
        yield b"{}"

    upstream = Upstream(
        lambda request: httpx.Response(
            200, headers={"Content-Length": str(MAX_BODY_BYTES + 1)}, content=body()
        )
    )
    with pytest.raises(ResponseTooLargeError, match="larger than the 4 MiB limit"):
        get(upstream)
    assert produced == 0


def test_a_body_of_exactly_four_mebibytes_is_read() -> None:
    payload = json.dumps({"code": 0, "data": "x" * (MAX_BODY_BYTES - 24)}).encode()
    payload += b" " * (MAX_BODY_BYTES - len(payload))
    assert len(payload) == MAX_BODY_BYTES
    reply = get(Upstream(lambda request: httpx.Response(200, content=payload)))
    assert reply.status == 200  # type: ignore[attr-defined]


def test_it_reports_malformed_json() -> None:
    upstream = Upstream(lambda request: httpx.Response(200, content=b"{'code': 0,"))
    with pytest.raises(MalformedResponseError, match=r"malformed JSON \(HTTP 200\)"):
        get(upstream)


def test_it_reports_an_empty_success_body() -> None:
    with pytest.raises(MalformedResponseError, match="empty body"):
        get(Upstream(lambda request: httpx.Response(200, content=b"")))


def test_a_non_json_error_body_reaches_the_adapter_as_none() -> None:
    reply = get(Upstream(lambda request: httpx.Response(401, content=b"<html>no</html>")))
    assert (reply.status, reply.body) == (401, None)  # type: ignore[attr-defined]


def test_it_reports_a_server_error_with_the_providers_detail() -> None:
    upstream = Upstream(
        lambda request: httpx.Response(500, json={"detail": "Internal server error (error_id: x1)"})
    )
    with pytest.raises(
        ProviderHTTPError, match=r"RAGFlow answered HTTP 500: Internal server error \(error_id: x1\)"
    ):
        get(upstream)


def test_a_server_error_echoing_the_key_is_redacted() -> None:
    upstream = Upstream(
        lambda request: httpx.Response(
            500, json={"detail": f"bad header Authorization: Bearer {RAGFLOW_KEY} for {RAGFLOW_KEY}"}
        )
    )
    with pytest.raises(ProviderHTTPError) as caught:
        get(upstream)
    assert RAGFLOW_KEY not in str(caught.value)
    assert "[redacted]" in str(caught.value)


def test_json_bodies_come_back_with_the_key_removed() -> None:
    upstream = Upstream(
        lambda request: httpx.Response(200, json={"code": 0, "data": [f"echo {RAGFLOW_KEY}"]})
    )
    reply = get(upstream)
    assert reply.body == {"code": 0, "data": ["echo [redacted]"]}  # type: ignore[attr-defined]


def test_the_credential_travels_only_in_its_header_and_never_in_the_repr() -> None:
    upstream = Upstream(lambda request: httpx.Response(200, json={"code": 0, "data": []}))
    get(upstream)
    request = upstream.requests[0]
    assert request.headers["Authorization"] == f"Bearer {RAGFLOW_KEY}"
    assert RAGFLOW_KEY not in str(request.url)
    assert RAGFLOW_KEY not in repr(connection(upstream))


@pytest.mark.parametrize("base_url", ["ftp://ragflow.example.test", "ragflow.example.test", "", "https://"])
def test_it_refuses_a_base_url_that_is_not_http_or_https(base_url: str) -> None:
    with pytest.raises(ProviderConfigurationError, match=r"needs an http:// or https:// base URL"):
        Connection(label="RAGFlow", base_url=base_url, timeout=5)


def test_transport_override_routes_the_factory_and_is_undone_on_exit() -> None:
    upstream = Upstream(lambda request: httpx.Response(200, json={"code": 0, "data": []}))
    with transport_override(upstream.transport):
        with ProviderSession(Connection(label="RAGFlow", base_url=RAGFLOW_URL, timeout=5)) as session:
            session.get("/api/v1/datasets")
        assert len(upstream.requests) == 1
    assert build_client(timeout=5)._transport is not upstream.transport


def test_a_body_falsely_labelled_gzip_by_a_real_server_is_refused_unread() -> None:
    # This used to be a MockTransport test expecting httpx's DecodingError: a mock response
    # built from bytes is decoded inside the transport, before our client sees it. A real
    # server's body reaches the client undecoded, and the client refuses it unread.
    class FalseGzip(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"not gzip at all"
            self.send_response(200)
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), FalseGzip)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        assert isinstance(host, str)
        real = Connection(label="RAGFlow", base_url=f"http://{host}:{port}", timeout=5)
        with (
            ProviderSession(real) as session,
            pytest.raises(MalformedResponseError, match=r"'gzip'-encoded body .* it was not read"),
        ):
            session.get("/api/v1/datasets")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_an_unparseable_base_url_is_a_configuration_error() -> None:
    with pytest.raises(ProviderConfigurationError):
        Connection(label="RAGFlow", base_url="http://exa mple.test:port", timeout=5)


def test_a_body_trickling_past_the_bindings_timeout_is_cut_off() -> None:
    # httpx's own timeout restarts with every read; the deadline covers the whole answer.
    # (A mock transport touches no socket, so this is the session's own check between
    # pieces; tests/integration/test_providers_deadline.py trickles over real sockets.)
    clock = [1000.0]
    deadline = Deadline(7, clock=lambda: clock[0])
    produced = 0

    def trickle() -> Iterator[bytes]:
        nonlocal produced
        for _ in range(100):
            produced += 1
            clock[0] += 3  # each piece arrives well within a per-read timeout
            yield b" "

    with pytest.raises(
        ProviderTimeoutError, match=r"within 7 s.*while reading the response body of the dataset"
    ):
        get(Upstream(lambda request: httpx.Response(200, content=trickle())), timeout=7, deadline=deadline)
    assert produced == 3


def test_json_nested_too_deep_to_parse_is_malformed_not_a_crash() -> None:
    upstream = Upstream(lambda request: httpx.Response(200, content=b"[" * 200_000 + b"]" * 200_000))
    with pytest.raises(MalformedResponseError, match=r"malformed JSON \(HTTP 200\)"):
        get(upstream)


def test_json_nested_deeper_than_the_redaction_walk_is_malformed_not_a_crash() -> None:
    depth = sys.getrecursionlimit() - 100  # parses, but walking it needs more frames than allowed
    upstream = Upstream(lambda request: httpx.Response(200, content=b"[" * depth + b"]" * depth))
    with pytest.raises(MalformedResponseError, match=r"malformed JSON \(HTTP 200\)"):
        get(upstream)


def test_it_asks_for_an_uncompressed_body() -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("accept-encoding", ""))
        return httpx.Response(200, json={"code": 0, "data": []})

    get(Upstream(answer))
    assert seen == ["identity"]


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br"])
def test_a_compressed_body_is_refused_unread_even_a_compression_bomb(encoding: str) -> None:
    import zlib

    # 64 MiB of spaces compress to about 64 KiB; this server ignores our Accept-Encoding.
    bomb = zlib.compress(b" " * (64 * 1024 * 1024), 9)
    assert len(bomb) < 100 * 1024
    pieces_read = 0

    def body() -> Iterator[bytes]:
        nonlocal pieces_read
        for start in range(0, len(bomb), 4096):
            pieces_read += 1
            yield bomb[start : start + 4096]

    upstream = Upstream(
        lambda request: httpx.Response(200, headers={"Content-Encoding": encoding}, content=body())
    )
    with pytest.raises(MalformedResponseError, match=f"'{encoding}'-encoded body .* it was not read"):
        get(upstream)
    assert pieces_read == 0
