"""One deadline per search, against real servers on loopback that trickle or say nothing.

Each server sends one byte every 20 ms — far inside any per-read timeout — so only
an overall deadline can end the call. The tests assert the timeout error (what ran
out, and the binding's figure) and that the adapter stopped reading: the server sees
the client hang up, and the bytes it managed to send stay far short of the response.
Wall-clock figures are in bench/deadline.py; these assert counts and verdicts.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from knowledgeweb.providers import lightrag, ragflow
from knowledgeweb.providers.client import Connection, ProviderSession
from knowledgeweb.providers.deadline import Deadline
from knowledgeweb.providers.errors import ProviderTimeoutError
from knowledgeweb.providers.ragflow import DatasetSelection, RagflowProvider
from knowledgeweb.providers.slots import origin_of, request_slot
from tests.local_servers import (
    RagflowServer,
    TrickleServer,
    complete_headers,
    synthetic_dataset,
    trickled_headers,
)

KEY = "lightrag-synthetic-deadline-key-5f4e3d"
#: At one byte per 20 ms, a 100,000-byte response would take over half an hour.
FULL = 100_000


@pytest.fixture
def servers() -> Iterator[list[TrickleServer]]:
    started: list[TrickleServer] = []
    yield started
    for server in started:
        server.close()


def start(servers: list[TrickleServer], **kwargs: object) -> TrickleServer:
    server = TrickleServer(**kwargs)  # type: ignore[arg-type]
    servers.append(server)
    return server


def lightrag_search(url: str, timeout: float) -> None:
    connection = lightrag.lightrag_connection(base_url=url, api_key=KEY, timeout=timeout)
    lightrag.LightragProvider(connection=connection).search("who founded acme?")


def assert_stopped_reading(server: TrickleServer) -> None:
    # The client hung up: the server's next send failed (or its read saw the end).
    assert server.hung_up.wait(5), "the server never saw the client hang up"
    assert server.finished.wait(5)
    assert server.sent < FULL // 100, f"{server.sent} bytes were read before the client stopped"


def test_headers_trickling_one_byte_at_a_time_end_at_the_deadline(servers: list[TrickleServer]) -> None:
    server = start(servers, trickle=trickled_headers(FULL))
    with pytest.raises(ProviderTimeoutError) as caught:
        lightrag_search(server.url, timeout=0.5)
    assert str(caught.value) == (
        "LightRAG sent no complete answer within 0.5 s, the binding's timeout for the whole search; "
        "it ran out while waiting for the response headers of the mix query."
    )
    assert caught.value.code == "provider_timeout"
    assert server.requests == 1
    assert_stopped_reading(server)
    assert KEY not in str(caught.value)


def test_a_body_trickling_one_byte_at_a_time_ends_at_the_deadline(servers: list[TrickleServer]) -> None:
    server = start(servers, head=complete_headers(FULL), trickle=b" " * FULL)
    with pytest.raises(ProviderTimeoutError) as caught:
        lightrag_search(server.url, timeout=0.5)
    assert str(caught.value) == (
        "LightRAG sent no complete answer within 0.5 s, the binding's timeout for the whole search; "
        "it ran out while reading the response body of the mix query."
    )
    assert_stopped_reading(server)


def test_a_server_that_never_answers_ends_at_the_deadline(servers: list[TrickleServer]) -> None:
    server = start(servers, silent=True)
    with pytest.raises(ProviderTimeoutError, match=r"within 0\.3 s.*waiting for the response headers"):
        lightrag_search(server.url, timeout=0.3)
    assert server.hung_up.wait(5)
    assert server.sent == 0


def test_a_tls_handshake_that_never_completes_ends_at_the_deadline(servers: list[TrickleServer]) -> None:
    # The server accepts TCP and never answers the ClientHello.
    server = start(servers, silent=True)
    with pytest.raises(ProviderTimeoutError, match=r"within 0\.3 s.*while connecting for the mix query"):
        lightrag_search(f"https://127.0.0.1:{server.port}", timeout=0.3)
    assert server.hung_up.wait(5)


def test_every_request_of_a_ragflow_search_shares_one_deadline() -> None:
    # Each answer takes 0.25 s, well inside a 0.6 s per-request timeout; the search
    # needs 1 dataset list + 10 document checks (at most 4 at once) + 1 retrieval,
    # about 1.25 s in all, so a per-request timeout would let it finish.
    server = RagflowServer(datasets=[synthetic_dataset("dsA")], delay=0.25)
    try:
        selection = [DatasetSelection("dsA", tuple(f"d{i:04d}" for i in range(1000)))]
        connection = ragflow.ragflow_connection(base_url=server.url, api_key=KEY, timeout=0.6)
        with pytest.raises(ProviderTimeoutError) as caught:
            RagflowProvider(connection=connection, selection=selection).search("warranty?")
    finally:
        server.close()
    message = str(caught.value)
    assert message.startswith(
        "RAGFlow sent no complete answer within 0.6 s, the binding's timeout for the whole search; it ran out "
    )
    assert "document check of batch" in message
    assert server.count("/api/v1/retrieval") == 0
    assert server.count("/documents") < 10


def test_the_deadline_is_shared_by_the_requests_of_one_session(servers: list[TrickleServer]) -> None:
    # Two requests through one session: the second gets only what the first left.
    server = start(servers, head=complete_headers(FULL), trickle=b" " * FULL)
    clock = [0.0]
    deadline = Deadline(5, clock=lambda: clock[0])
    connection = Connection(label="LightRAG", base_url=server.url, timeout=5)
    clock[0] = 5.0  # the first request of the search used the whole budget
    with (
        ProviderSession(connection, deadline=deadline) as session,
        pytest.raises(ProviderTimeoutError, match="ran out before it could send the second request"),
    ):
        session.get("/query/data", action="second request")
    assert server.requests == 0


def test_waiting_for_a_request_slot_ends_at_the_deadline(servers: list[TrickleServer]) -> None:
    server = start(servers, silent=True)
    origin = origin_of(server.url)
    held = threading.Event()
    release = threading.Event()

    def hold_all_slots() -> None:
        deadline = Deadline(30)
        with (
            request_slot(origin, 4, deadline),
            request_slot(origin, 4, deadline),
            request_slot(origin, 4, deadline),
            request_slot(origin, 4, deadline),
        ):
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold_all_slots)
    holder.start()
    try:
        assert held.wait(5)
        connection = ragflow.ragflow_connection(base_url=server.url, api_key=KEY, timeout=0.3)
        with pytest.raises(ProviderTimeoutError) as caught:
            RagflowProvider(connection=connection).search("warranty?")
    finally:
        release.set()
        holder.join(5)
    assert str(caught.value) == (
        "RAGFlow sent no complete answer within 0.3 s, the binding's timeout for the whole search; it ran out "
        f"while waiting for one of the 4 requests this process lets run at once at {origin}, before it could "
        "send the dataset list request."
    )
    assert server.requests == 0
