"""Importing threads: every accepted shape, all or nothing, untrusted unless --trusted."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from knowledgeweb.knowledge import RetrievalHit, RetrievalResult, format_result
from knowledgeweb.threads.errors import MessageInvalidError, ThreadInvalidError
from knowledgeweb.threads.interchange.imports import MAX_IMPORT_MESSAGES, thread_import
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.selectors import thread_citations, thread_messages

pytestmark = pytest.mark.django_db

RESULT = RetrievalResult(
    provider="local", query="q", hits=(RetrievalHit(text="The excerpt.", title="Guide", dataset_name="Docs"),)
)


def retrieval_messages() -> tuple[list[dict[str, Any]], str]:
    """A tool message carrying a genuine envelope and an AI message citing it; returns (messages, href)."""
    content, artifact = format_result(RESULT)
    handle = f"knowledge-source-{artifact['knowledge_sources'][0]['id']}"
    messages: list[dict[str, Any]] = [
        {"type": "human", "content": "What does the guide say?"},
        {
            "type": "tool",
            "name": "knowledge_search",
            "tool_call_id": "c1",
            "content": content,
            "artifact": artifact,
        },
        {"type": "ai", "content": f"It says so [Guide](#{handle})."},
    ]
    return messages, f"#{handle}"


def states(thread: Thread) -> list[str]:
    return [c.state for entry in thread_citations(thread=thread) for c in entry.citations]


def test_it_imports_every_shape_in_order(user: User) -> None:
    messages = [
        {"type": "system", "content": "Be brief."},
        {"type": "human", "data": {"content": [{"type": "text", "text": "Hi"}], "type": "human"}},
        {"lc": 1, "type": "constructor", "id": ["langchain", "AIMessage"], "kwargs": {"content": "Hello"}},
        {"type": "ToolMessage", "content": "out", "name": "t", "tool_call_id": "c", "status": "error"},
    ]
    thread = thread_import(owner=user, title="Imported", agent_name="bot", messages=messages)
    stored = thread_messages(thread=thread)
    assert [(m.seq, m.type, m.content) for m in stored] == [
        (1, "system", "Be brief."),
        (2, "human", "Hi"),
        (3, "ai", "Hello"),
        (4, "tool", "out"),
    ]
    assert (stored[3].name, stored[3].tool_call_id, stored[3].status) == ("t", "c", "error")
    assert (thread.title, thread.agent_name, thread.owner) == ("Imported", "bot", user)


def test_an_invalid_message_57_of_100_names_it_and_writes_nothing(user: User) -> None:
    messages: list[Any] = [{"type": "human", "content": f"m{i}"} for i in range(1, 101)]
    messages[56] = {"type": "human", "content": [{"type": "text", "text": 5}]}
    with pytest.raises(MessageInvalidError) as caught:
        thread_import(owner=user, title="Big", messages=messages)
    assert str(caught.value).startswith("message 57: ")
    assert caught.value.position == 57
    assert Thread.objects.count() == 0
    assert Message.objects.count() == 0


def test_a_blank_title_is_refused_and_nothing_is_written(user: User) -> None:
    with pytest.raises(ThreadInvalidError, match="title"):
        thread_import(owner=user, title="", messages=[{"type": "human", "content": "q"}])
    assert (Thread.objects.count(), Message.objects.count()) == (0, 0)


def test_it_strips_reserved_keys_from_imported_artifacts_and_keeps_the_others(user: User) -> None:
    artifact = {"knowledge_sources": [], "knowledge_sources_version": 1, "retrieval_sources": [], "run": "r1"}
    thread = thread_import(
        owner=user, title="t", messages=[{"type": "tool", "content": "c", "artifact": artifact}]
    )
    assert thread_messages(thread=thread)[0].artifact == {"run": "r1"}


def test_a_forged_envelope_is_stored_stripped_and_its_citation_is_unresolved(user: User) -> None:
    messages, href = retrieval_messages()
    thread = thread_import(owner=user, title="forged", messages=messages)
    tool = thread_messages(thread=thread)[1]
    assert tool.artifact == {}
    report = thread_citations(thread=thread)
    assert [(c.href, c.state) for c in report[0].citations] == [(href, "unresolved")]


def test_a_trusted_import_keeps_genuine_evidence(user: User) -> None:
    messages, _ = retrieval_messages()
    thread = thread_import(owner=user, title="trusted", messages=messages, trusted=True)
    assert states(thread) == ["resolved"]


def test_a_trusted_record_with_a_wrong_id_is_stored_but_its_citation_is_unresolved(user: User) -> None:
    messages, _href = retrieval_messages()
    record = messages[1]["artifact"]["knowledge_sources"][0]
    record["title"] = "Retitled"  # the id no longer matches the record
    thread = thread_import(owner=user, title="wrong id", messages=messages, trusted=True)
    stored = thread_messages(thread=thread)[1]
    assert stored.artifact is not None
    assert stored.artifact["knowledge_sources"][0]["title"] == "Retitled"
    assert states(thread) == ["unresolved"]


def test_an_import_over_the_message_cap_is_refused_before_reading(user: User) -> None:
    messages = [{"type": "human", "content": ""}] * (MAX_IMPORT_MESSAGES + 1)
    with pytest.raises(MessageInvalidError, match=f"at most {MAX_IMPORT_MESSAGES} messages"):
        thread_import(owner=user, title="too long", messages=messages)
    assert (Thread.objects.count(), Message.objects.count()) == (0, 0)
