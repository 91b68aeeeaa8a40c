"""What the real LightRAG 1.5.7 server refuses or cannot answer, read through the whole stack.

Each failure must reach the reader as a clear error tool message (or, without a thread,
a clear ``RetrievalFailedError``), with no evidence written and nothing already in the
thread changed or lost; the key never appears in what is stored or shown.
"""

from __future__ import annotations

import hashlib
import html
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.retrieval import RetrievalFailedError, retrieval_search
from knowledgeweb.retrieval.errors import RetrievalModeError
from knowledgeweb.threads.evidence import message_sources
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import message_append
from tests.lightrag_real.checks import cite_all, recorded_message, thread_messages, use_mode, viewer_resolves
from tests.lightrag_real.conftest import API_KEY, KEY_ENV, RealLightrag
from tests.lightrag_real.servers import EMBEDDING_DIMENSION, corpus
from tests.live.conftest import RecordingTransport
from tests.pages import with_hits
from tests.standins.openai_server import content_words

pytestmark = [pytest.mark.real_lightrag, pytest.mark.django_db]

TOOLS = ["knowledge_search", "entity_relations_search"]
WRONG_KEY = "lightrag-wrong-key-0f9e8d7c6b5a"
#: Words the corpus never uses, chosen so their hashed embeddings share no coordinate with it.
UNRELATED = "quantum marmalade saxophone"
TOO_SHORT = (
    "LightRAG rejected the query as invalid: Validation error: body: Value error, RAG query is too "
    "short. Enter at least 3 English characters or an equivalent combination where each Chinese, "
    "Japanese or Korean character counts as 2."
)


def failed(tool: str, reason: str) -> str:
    return f"{tool} failed (LightRAG, binding 'lightrag-real'): {reason}"


def asked(thread: Thread, query: str) -> list[tuple[str, str, str, object]]:
    """The thread before the search: the question (and whatever came earlier)."""
    message_append(thread=thread, type="human", content=query)
    return thread_messages(thread)


def assert_recorded_failure(
    thread: Thread, before: list[tuple[str, str, str, object]], content: str, code: str
) -> None:
    """Exactly one message was added: an error tool message whose artifact holds only the
    failure's code (no evidence); nothing else changed."""
    after = thread_messages(thread)
    assert after[: len(before)] == before
    assert after[len(before) :] == [("tool", "error", content, {"error": {"code": code}})]
    assert message_sources(Message.objects.filter(thread=thread).last()) == {}  # type: ignore[arg-type]


@pytest.mark.parametrize("tool", TOOLS)
def test_a_wrong_key_is_a_clear_authentication_failure_and_writes_no_evidence(
    tool: str,
    binding: KnowledgeBinding,
    user: User,
    thread: Thread,
    reader: Client,
    recording: RecordingTransport,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_ENV, WRONG_KEY)
    before = asked(thread, "Who founded the Meridian Observatory?")
    outcome = retrieval_search(
        user=user, tool=tool, query="Who founded the Meridian Observatory?", thread_id=thread.id
    )

    expected = failed(tool, "LightRAG rejected the API key (HTTP 403): Invalid API Key")
    assert (outcome.status, outcome.content, outcome.artifact) == (
        "error",
        expected,
        {"error": {"code": "provider_auth"}},
    )
    assert [(status, body) for _, status, body in recording.exchanges] == [
        (403, {"detail": "Invalid API Key"})
    ]
    assert_recorded_failure(thread, before, expected, "provider_auth")
    page = with_hits(reader, reader.get(f"/threads/{thread.id}/").content.decode())
    assert 'data-tool-status="error"' in page
    assert "Invalid API Key" in page
    assert WRONG_KEY not in page
    assert API_KEY not in page


def test_a_wrong_key_without_a_thread_raises_and_writes_nothing(
    binding: KnowledgeBinding, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, WRONG_KEY)
    with pytest.raises(RetrievalFailedError) as raised:
        retrieval_search(user=user, tool="knowledge_search", query="Who founded the Meridian Observatory?")
    assert str(raised.value) == failed(
        "knowledge_search", "LightRAG rejected the API key (HTTP 403): Invalid API Key"
    )
    assert Message.objects.count() == 0


@pytest.mark.parametrize("tool", TOOLS)
def test_a_too_short_query_is_refused_by_the_server_with_its_own_explanation(
    tool: str, binding: KnowledgeBinding, user: User, thread: Thread, recording: RecordingTransport
) -> None:
    before = asked(thread, "ab")
    outcome = retrieval_search(user=user, tool=tool, query="ab", thread_id=thread.id)
    assert (outcome.status, outcome.content) == ("error", failed(tool, TOO_SHORT))
    assert [status for _, status, _ in recording.exchanges] == [400]
    assert_recorded_failure(thread, before, failed(tool, TOO_SHORT), "provider_rejected")


def test_an_unknown_mode_is_refused_before_anything_is_sent_or_written(
    binding: KnowledgeBinding, user: User, thread: Thread, recording: RecordingTransport
) -> None:
    # The server's own refusal of an unknown mode is pinned in test_wire.py.
    before = asked(thread, "Who founded the Meridian Observatory?")
    with pytest.raises(RetrievalModeError) as refused:
        retrieval_search(
            user=user,
            tool="knowledge_search",
            query="Who founded the Meridian Observatory?",
            thread_id=thread.id,
            mode="sideways",
        )
    assert str(refused.value) == (
        "binding 'lightrag-real' does not allow the mode 'sideways' for knowledge_search; "
        "choose one of: mix. Nothing was sent."
    )
    assert recording.exchanges == []
    assert thread_messages(thread) == before


def test_the_unrelated_query_shares_no_embedding_coordinate_with_the_corpus() -> None:
    """The precondition of the empty-result tests, from the stand-in's own hashing."""

    def coordinates(words: set[str]) -> set[int]:
        return {
            1 + int.from_bytes(hashlib.sha256(w.encode()).digest()[:8], "big") % (EMBEDDING_DIMENSION - 1)
            for w in words
        }

    vocabulary = {word for text in corpus().values() for word in content_words(text)}
    assert not coordinates(set(content_words(UNRELATED))) & coordinates(vocabulary)


@pytest.mark.parametrize(("tool", "mode"), [*((t, None) for t in TOOLS), ("knowledge_search", "naive")])
def test_an_empty_result_is_a_successful_search_that_cites_nothing(
    tool: str,
    mode: str | None,
    binding: KnowledgeBinding,
    user: User,
    thread: Thread,
    reader: Client,
    recording: RecordingTransport,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if mode is not None:
        use_mode(binding, mode)
    before = asked(thread, UNRELATED)
    outcome = retrieval_search(user=user, tool=tool, query=UNRELATED, thread_id=thread.id)

    (body,) = recording.bodies("/query/data")
    sent_mode = mode or ("mix" if tool == "knowledge_search" else "hybrid")
    message = "No relevant document chunks found." if sent_mode == "naive" else "Query returned no results"
    assert body == {
        "status": "failure",
        "message": message,
        "data": {},
        "metadata": {"failure_reason": "no_results", "mode": sent_mode},
    }
    label = "Knowledge search" if tool == "knowledge_search" else "Entity relations search"
    assert (outcome.status, outcome.content) == ("success", f"{label} results from lightrag: nothing found.")
    after = thread_messages(thread)
    assert after[: len(before)] == before
    assert [m[:3] for m in after[len(before) :]] == [("tool", "success", outcome.content)]
    assert message_sources(recorded_message(outcome)) == {}
    page = with_hits(reader, reader.get(f"/threads/{thread.id}/").content.decode())
    # The reader sees what was searched for (the query, escaped), and no citation.
    assert f"Nothing found for “{html.escape(UNRELATED)}” ({label}, lightrag)." in page
    assert "data-citation=" not in page


def test_a_server_stopped_mid_test_fails_clearly_and_keeps_the_evidence_already_written(
    real_lightrag: RealLightrag,
    binding: KnowledgeBinding,
    user: User,
    thread: Thread,
    reader: Client,
    tmp_path: Path,
) -> None:
    server = real_lightrag.start_copy(tmp_path / "copy")
    try:
        binding.base_url = server.base_url
        binding.save()
        question = "Who founded the Meridian Observatory?"
        message_append(thread=thread, type="human", content=question)
        first = retrieval_search(user=user, tool="knowledge_search", query=question, thread_id=thread.id)
        assert first.status == "success"
        sources = message_sources(recorded_message(first))
        assert sources
        cite_all(thread, first.content)
        before = asked(thread, "And who directed it?")

        server.process.stop()
        assert not server.process.running()
        outcome = retrieval_search(
            user=user, tool="knowledge_search", query="Who directed it?", thread_id=thread.id
        )
    finally:
        server.process.stop()

    assert outcome.status == "error"
    assert outcome.content.startswith(
        failed("knowledge_search", "LightRAG could not be reached (ConnectError: ")
    ), outcome.content
    assert_recorded_failure(thread, before, outcome.content, "provider_unreachable")
    # The evidence written before the stop still resolves in the viewer.
    assert message_sources(recorded_message(first)) == sources
    page = viewer_resolves(reader, thread, sources)
    assert 'data-tool-status="error"' in page
