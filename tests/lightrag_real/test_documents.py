"""knowledge_search against the real LightRAG 1.5.7 server, through the whole stack.

binding -> ``retrieval_search`` -> adapter -> ``format_result`` -> tool message -> viewer page.
Every cited excerpt is compared with the chunks in the server's own ``/query/data`` answer.

Query modes: bindings do not choose a mode yet (the adapter sends ``mix`` for documents),
so ``checks.use_mode`` sets it where the adapter holds it, and the recorded request proves
the server was asked in that mode (see ``use_mode`` for the change once bindings choose).
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.retrieval import retrieval_search
from knowledgeweb.retrieval.errors import RetrievalModeError
from knowledgeweb.threads.evidence import message_sources
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import message_append
from tests.lightrag_real.checks import (
    assert_server_repeats,
    cite_all,
    quoted_chunk,
    recorded_data,
    recorded_message,
    recorded_request,
    use_mode,
    viewer_resolves,
)
from tests.lightrag_real.conftest import API_KEY
from tests.lightrag_real.servers import LightragServer
from tests.live.conftest import RecordingTransport

pytestmark = [pytest.mark.real_lightrag, pytest.mark.django_db]

QUESTION = "Who founded the Meridian Observatory?"
DOCUMENT_MODES = ["local", "global", "hybrid", "naive", "mix"]


def search(user: User, thread: Thread, query: str = QUESTION) -> Message:
    message_append(thread=thread, type="human", content=query)
    outcome = retrieval_search(user=user, tool="knowledge_search", query=query, thread_id=thread.id)
    assert outcome.status == "success", outcome.content
    return recorded_message(outcome)


@pytest.mark.parametrize("mode", DOCUMENT_MODES)
def test_every_mode_cites_exactly_the_chunks_the_server_returned(
    mode: str,
    binding: KnowledgeBinding,
    lightrag_server: LightragServer,
    user: User,
    thread: Thread,
    reader: Client,
    recording: RecordingTransport,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_mode(binding, mode)
    message = search(user, thread)

    sent = recorded_request(recording)
    assert sent == {"query": QUESTION, "mode": mode, "top_k": 10, "chunk_top_k": 10}
    data = recorded_data(recording)
    assert_server_repeats(lightrag_server, sent, data)
    if mode == "naive":
        assert (data["entities"], data["relationships"]) == ([], [])
    else:
        assert data["entities"], f"{mode} mode used no graph"
        assert data["relationships"], f"{mode} mode used no graph"

    sources = message_sources(message)
    returned = data["chunks"][:10]
    assert returned, f"{mode} mode returned no chunk for a question the corpus answers"
    # One source per returned chunk, each quoting that chunk of that file, nothing else.
    assert sorted(quoted_chunk(e, returned)["chunk_id"] for e in sources.values()) == sorted(
        c["chunk_id"] for c in returned
    )
    assert {e.title for e in sources.values()} <= set(lightrag_server.documents)
    assert all((e.provider, e.url, e.page) == ("lightrag", None, None) for e in sources.values())
    assert any("Clara Voss founded the Meridian Observatory" in e.excerpt for e in sources.values())

    handles = cite_all(thread, message.content)
    assert sorted(handles) == sorted(sources)
    viewer_resolves(reader, thread, sources)


def test_the_default_search_asks_in_mix_mode_with_the_key_header_and_the_bindings_top_k(
    binding: KnowledgeBinding, user: User, thread: Thread, recording: RecordingTransport
) -> None:
    binding.top_k = 2
    binding.save()
    message = search(user, thread)
    ((request, status, body),) = recording.exchanges
    assert (request.method, request.url.path, status) == ("POST", "/query/data", 200)
    assert request.headers["X-API-Key"] == API_KEY
    assert recorded_request(recording) == {"query": QUESTION, "mode": "mix", "top_k": 2, "chunk_top_k": 2}
    assert len(body["data"]["chunks"]) == 2
    assert len(message_sources(message)) == 2


def test_references_number_the_returned_files_and_every_chunk_names_its_file(
    binding: KnowledgeBinding, user: User, thread: Thread, recording: RecordingTransport
) -> None:
    search(user, thread)
    data = recorded_data(recording)
    references = {r["reference_id"]: r["file_path"] for r in data["references"]}
    assert list(references) == [str(n) for n in range(1, len(references) + 1)]
    for chunk in data["chunks"]:
        assert set(chunk) == {"reference_id", "content", "file_path", "chunk_id"}
        assert references[chunk["reference_id"]] == chunk["file_path"]
        assert re.fullmatch(r"doc-[0-9a-f]{32}-chunk-\d{3}", chunk["chunk_id"]), chunk["chunk_id"]
    counts = [sum(c["file_path"] == references[r] for c in data["chunks"]) for r in references]
    assert counts == sorted(counts, reverse=True), "references are numbered by how often each file appears"


def test_bypass_mode_retrieves_nothing_so_a_search_may_not_ask_for_it_and_nothing_is_sent(
    binding: KnowledgeBinding, user: User, thread: Thread, recording: RecordingTransport
) -> None:
    # What the server answers in bypass mode (no data at all) is pinned in test_wire.py.
    before = list(Message.objects.filter(thread=thread).values_list("pk", flat=True))
    with pytest.raises(RetrievalModeError) as refused:
        retrieval_search(
            user=user, tool="knowledge_search", query=QUESTION, thread_id=thread.id, mode="bypass"
        )
    assert str(refused.value) == (
        "binding 'lightrag-real' does not allow the mode 'bypass' for knowledge_search; "
        "choose one of: mix. Nothing was sent."
    )
    assert recording.exchanges == []
    assert list(Message.objects.filter(thread=thread).values_list("pk", flat=True)) == before


def test_an_agent_searching_through_the_api_gets_the_servers_chunks_as_evidence(
    binding: KnowledgeBinding,
    thread: Thread,
    api_client: Client,
    reader: Client,
    recording: RecordingTransport,
) -> None:
    response = api_client.post(
        "/api/knowledge/search",
        {"tool": "knowledge_search", "query": QUESTION, "thread_id": str(thread.id)},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["status"], body["binding"], body["provider"]) == ("success", "lightrag-real", "lightrag")
    message = Message.objects.get(id=body["message_id"])
    assert (message.content, message.artifact) == (body["content"], body["artifact"])
    chunks = recorded_data(recording)["chunks"]
    sources = message_sources(message)
    assert len(sources) == len(chunks)
    for evidence in sources.values():
        quoted_chunk(evidence, chunks)
    cite_all(thread, message.content)
    viewer_resolves(reader, thread, sources)
