"""The evidence walk: validated once per immutable message, earlier evidence only, first handle wins."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from django.core.cache import cache

from knowledgeweb.knowledge import RagflowLocator, RetrievalHit, RetrievalResult, find_citations, source_id
from knowledgeweb.threads.evidence import (
    evidence_before,
    message_sources,
    resolve_citation,
    validation_counter,
)
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.selectors import thread_messages
from knowledgeweb.threads.services import message_append

pytestmark = pytest.mark.django_db

Append = Callable[..., Message]

SHARED = RetrievalResult(
    provider="lightrag",
    query="q",
    hits=(
        RetrievalHit(text="Alpha excerpt.", title="alpha.md", dataset_name="Docs"),
        RetrievalHit(text="Beta excerpt.", title="beta.md"),
    ),
)
NATIVE = RetrievalResult(
    provider="ragflow",
    query="q",
    hits=(
        RetrievalHit(
            text="Native excerpt.",
            title="manual.pdf",
            dataset_name="Manuals",
            locator=RagflowLocator(dataset_id="ds1", document_id="doc1", chunk_id="c1", pages=(4,)),
        ),
    ),
)


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    cache.clear()
    validation_counter.reset()
    yield
    cache.clear()


def handles(message: Message) -> list[str]:
    return list(message_sources(message))


def test_it_reads_the_shared_sources_of_a_tool_message(thread: Thread, append_retrieval: Append) -> None:
    tool = append_retrieval(thread, SHARED)
    sources = message_sources(tool)
    expected_id = source_id("lightrag", "alpha.md", "Alpha excerpt.", "Docs")
    assert next(iter(sources)) == f"knowledge-source-{expected_id}"
    assert sources[f"knowledge-source-{expected_id}"].dataset_name == "Docs"
    assert len(sources) == 2


def test_it_reads_a_native_snapshot_from_knowledge_search(thread: Thread, append_retrieval: Append) -> None:
    tool = append_retrieval(thread, NATIVE, native_nonce="a" * 32)
    (source,) = message_sources(tool).values()
    assert (source.handle, source.form, source.title, source.pages) == (
        f"knowledge-{'a' * 32}-1",
        "native",
        "manual.pdf",
        (4,),
    )


def test_a_message_that_is_not_a_tool_message_holds_no_evidence(
    thread: Thread, append_retrieval: Append
) -> None:
    tool = append_retrieval(thread, SHARED)
    validation_counter.reset()  # the tool message was validated once, when it was written
    ai = message_append(thread=thread, type="ai", content=tool.content)
    assert message_sources(ai) == {}
    assert validation_counter.count == 0


def test_it_validates_each_message_once_and_a_second_walk_validates_nothing(
    thread: Thread, append_retrieval: Append
) -> None:
    append_retrieval(thread, SHARED)
    message_append(thread=thread, type="ai", content="answer")
    append_retrieval(thread, NATIVE)
    messages = thread_messages(thread=thread)

    list(evidence_before(messages))
    assert validation_counter.count == 2
    list(evidence_before(thread_messages(thread=thread)))
    assert validation_counter.count == 2

    append_retrieval(
        thread, RetrievalResult(provider="local", query="q", hits=(RetrievalHit(text="x", title="t"),))
    )
    list(evidence_before(thread_messages(thread=thread)))
    assert validation_counter.count == 3


def test_the_memo_is_keyed_by_id_and_digest(thread: Thread, append_retrieval: Append) -> None:
    tool = append_retrieval(thread, SHARED)
    message_sources(tool)
    tool.digest = "0" * 64  # a different content digest is a different cache entry
    message_sources(tool)
    assert validation_counter.count == 2


def test_each_message_sees_only_the_evidence_before_it(thread: Thread, append_retrieval: Append) -> None:
    first = message_append(thread=thread, type="ai", content="before any retrieval")
    tool = append_retrieval(thread, SHARED)
    after = message_append(thread=thread, type="ai", content="after")
    seen = {
        message.pk: set(available) for message, available in evidence_before(thread_messages(thread=thread))
    }
    assert seen[first.pk] == set()
    assert seen[tool.pk] == set()
    assert seen[after.pk] == set(handles(tool))


def test_the_first_source_with_a_handle_wins(thread: Thread, append_retrieval: Append) -> None:
    # Native ids are a per-call nonce plus a position: a replayed nonce claims the same handle.
    append_retrieval(thread, NATIVE, native_nonce="b" * 32)
    impostor = NATIVE.model_copy(update={"hits": (NATIVE.hits[0].model_copy(update={"text": "Replaced."}),)})
    later = append_retrieval(thread, impostor, native_nonce="b" * 32)
    assert handles(later) == [f"knowledge-{'b' * 32}-1"]
    ai = message_append(thread=thread, type="ai", content="a")
    available = dict(evidence_before(thread_messages(thread=thread)))[ai]
    assert available[f"knowledge-{'b' * 32}-1"].excerpt == "Native excerpt."


def test_a_yielded_mapping_is_read_only_and_outlives_the_walk(
    thread: Thread, append_retrieval: Append
) -> None:
    message_append(thread=thread, type="human", content="q")
    append_retrieval(thread, SHARED)
    message_append(thread=thread, type="ai", content="a")
    walked = list(evidence_before(thread_messages(thread=thread)))
    assert [len(available) for _, available in walked] == [0, 0, 2]
    with pytest.raises(TypeError):
        walked[2][1]["x"] = None  # type: ignore[index]


def test_it_resolves_malformed_unresolved_and_resolved_citations(
    thread: Thread, append_retrieval: Append
) -> None:
    tool = append_retrieval(thread, SHARED)
    handle = handles(tool)[0]
    markdown = (
        f"[good](#{handle}) [user](#user-content-{handle}) "
        f"[missing](#knowledge-source-{'0' * 32}) [bad](#knowledge-source-{'A' * 32})"
    )
    available = message_sources(tool)
    states = [(r.label, r.state) for r in (resolve_citation(c, available) for c in find_citations(markdown))]
    assert states == [
        ("good", "resolved"),
        ("user", "resolved"),
        ("missing", "unresolved"),
        ("bad", "malformed"),
    ]
    resolved = resolve_citation(find_citations(markdown)[0], available)
    assert resolved.source is not None
    assert resolved.source.title == "alpha.md"
    assert resolved.reason == ""


def test_a_forged_envelope_appended_by_a_caller_holds_no_evidence(
    thread: Thread, append_retrieval: Append
) -> None:
    genuine = append_retrieval(thread, SHARED)
    forged = message_append(
        thread=thread,
        type="tool",
        name="knowledge_search",
        content=genuine.content,
        artifact=genuine.artifact,
    )
    assert forged.artifact is None or "knowledge_sources" not in forged.artifact
    assert message_sources(forged) == {}


def test_a_trusted_record_with_a_wrong_id_is_rejected_by_the_reader(thread: Thread) -> None:
    wrong = "f" * 32
    content = f"[citation:Doc](#knowledge-source-{wrong})\nExcerpt."
    record = {"id": wrong, "provider": "local", "title": "Doc", "excerpt": "Excerpt."}
    tool = message_append(
        thread=thread,
        type="tool",
        name="knowledge_search",
        content=content,
        artifact={"knowledge_sources_version": 1, "knowledge_sources": [record]},
        trusted=True,
    )
    assert tool.artifact is not None
    assert tool.artifact["knowledge_sources"] == [record], "stored as written"
    assert message_sources(tool) == {}
