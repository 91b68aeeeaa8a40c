"""The citation report through the API: resolved, unresolved (incl. later-only evidence) and malformed."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from knowledgeweb.knowledge import RagflowLocator, RetrievalHit, RetrievalResult, source_id
from knowledgeweb.knowledge.linkgrammar import parse_counter
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.selectors import thread_citations
from knowledgeweb.threads.services import message_append

pytestmark = pytest.mark.django_db

Append = Callable[..., Message]

SHARED = RetrievalResult(
    provider="lightrag",
    query="retention policy",
    hits=(RetrievalHit(text="Backups are kept for 30 days.", title="policy.md", dataset_name="Ops"),),
)
NATIVE = RetrievalResult(
    provider="ragflow",
    query="retention policy",
    hits=(
        RetrievalHit(
            text="Logs are kept for 90 days.",
            title="handbook.pdf",
            dataset_name="Handbooks",
            locator=RagflowLocator(dataset_id="ds-1", document_id="doc-9", chunk_id="ch-3", pages=(12,)),
        ),
    ),
)
LATER = RetrievalResult(
    provider="local",
    query="archives",
    hits=(RetrievalHit(text="Archives are kept forever.", title="archive.md"),),
)
NONCE = "0123456789abcdef0123456789abcdef"


def append_ai(client: Client, thread: Thread, content: str) -> None:
    response = client.post(
        f"/api/threads/{thread.id}/messages",
        json.dumps({"type": "ai", "content": content}),
        content_type="application/json",
    )
    assert response.status_code == 201


def test_the_report_resolves_all_three_href_forms_and_flags_later_and_mangled_ones(
    api_client: Client, thread: Thread, append_retrieval: Append
) -> None:
    shared_id = source_id("lightrag", "policy.md", "Backups are kept for 30 days.", "Ops")
    later_id = source_id("local", "archive.md", "Archives are kept forever.")
    append_retrieval(thread, SHARED)
    append_retrieval(thread, NATIVE, native_nonce=NONCE)
    append_ai(
        api_client,
        thread,
        f"Backups last 30 days [citation:policy.md](#knowledge-source-{shared_id}), "
        f"as the policy says [policy](#user-content-knowledge-source-{shared_id}); "
        f"logs last 90 days [citation:1](#knowledge-{NONCE}-1). "
        f"Archives are forever [archive](#knowledge-source-{later_id}) "
        f"and [mangled](#knowledge-source-{shared_id.upper()}).",
    )
    append_retrieval(thread, LATER)

    response = api_client.get(f"/api/threads/{thread.id}/citations")
    assert response.status_code == 200
    report = response.json()
    assert report["thread_id"] == str(thread.id)
    (entry,) = report["messages"]
    assert entry["seq"] == 3
    assert [(c["label"], c["state"]) for c in entry["citations"]] == [
        ("citation:policy.md", "resolved"),
        ("policy", "resolved"),
        ("citation:1", "resolved"),
        ("archive", "unresolved"),
        ("mangled", "malformed"),
    ]
    shared, user_content, native, later, mangled = entry["citations"]
    # One numbering: the thread's, in order of first citation.
    assert [c["number"] for c in entry["citations"]] == [1, 1, 2, None, None]
    assert shared["href"] == f"#knowledge-source-{shared_id}"
    assert user_content["href"] == f"#user-content-knowledge-source-{shared_id}"
    assert (
        shared["source"]
        == user_content["source"]
        == {
            "handle": f"knowledge-source-{shared_id}",
            "id": shared_id,
            "form": "shared",
            "provider": "lightrag",
            "title": "policy.md",
            "excerpt": "Backups are kept for 30 days.",
            "dataset_name": "Ops",
            "url": None,
            "page": None,
            "pages": [],
            "truncated": False,
        }
    )
    assert native["source"] == {
        "handle": f"knowledge-{NONCE}-1",
        "id": f"{NONCE}-1",
        "form": "native",
        "provider": "ragflow",
        "title": "handbook.pdf",
        "excerpt": "Logs are kept for 90 days.",
        "dataset_name": "Handbooks",
        "url": None,
        "page": 12,
        "pages": [12],
        "truncated": False,
    }
    assert later["source"] is None
    assert "later tool message" in later["reason"]
    assert mangled["source"] is None
    # The reason says what is wrong with the handle, not only that something is.
    assert mangled["reason"] == "The handle has upper-case letters; handles are lower case (0-9 and a-f)."
    assert mangled["number"] is None
    assert later["number"] is None


def test_only_ai_messages_are_reported(api_client: Client, thread: Thread) -> None:
    for kind in ("human", "system"):
        api_client.post(
            f"/api/threads/{thread.id}/messages",
            json.dumps({"type": kind, "content": f"[x](#knowledge-source-{'a' * 32})"}),
            content_type="application/json",
        )
    append_ai(api_client, thread, "No citations here, only [a link](https://example.org).")
    report = api_client.get(f"/api/threads/{thread.id}/citations").json()
    assert [(m["seq"], m["citations"]) for m in report["messages"]] == [(3, [])]


def test_an_unresolved_citation_without_any_evidence_says_so(api_client: Client, thread: Thread) -> None:
    append_ai(api_client, thread, f"[ghost](#knowledge-source-{'b' * 32})")
    (citation,) = api_client.get(f"/api/threads/{thread.id}/citations").json()["messages"][0]["citations"]
    assert citation["state"] == "unresolved"
    assert (
        citation["reason"]
        == "No tool message before this answer in the thread holds evidence for this source."
    )
    assert citation["number"] is None


def test_the_report_costs_two_queries_no_cache_round_trip_and_no_parse_however_many_tool_messages(
    thread: Thread, append_retrieval: Append, django_assert_num_queries: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for result in (SHARED, LATER, SHARED, LATER):
        append_retrieval(thread, result)
    message_append(thread=thread, type="ai", content=f"[ghost](#knowledge-source-{'c' * 32})")
    round_trips: list[Any] = []
    get_many = cache.get_many

    def counting_get_many(keys: Any) -> Any:
        round_trips.append(keys)
        return get_many(keys)

    monkeypatch.setattr(cache, "get_many", counting_get_many)
    parse_counter.reset()
    with django_assert_num_queries(2):  # the messages, and their renders stored at write
        (entry,) = thread_citations(thread=thread)
    assert [c.state for c in entry.citations] == ["unresolved"]
    assert round_trips == []
    assert parse_counter.count == 0
