"""Memoized validation and cached message fragments (SPEC §10), observed through the counters."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from knowledgeweb.knowledge import RetrievalHit, RetrievalResult, find_citations, format_result
from knowledgeweb.threads import evidence
from knowledgeweb.threads.evidence import validation_counter
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.selectors import thread_messages
from knowledgeweb.threads.services import message_append, thread_create, thread_import
from knowledgeweb.web.rendering import thread as thread_rendering
from knowledgeweb.web.rendering.pipeline import render_counter
from knowledgeweb.web.rendering.thread import fragment_counter, render_thread

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    cache.clear()
    validation_counter.reset()
    render_counter.reset()
    fragment_counter.reset()
    yield
    cache.clear()


@pytest.fixture
def owner() -> User:
    return User.objects.create_user("owner", password="pw-owner-1")


def _tool(thread: Thread, n: int) -> str:
    hits = (RetrievalHit(text=f"Fact number {n}.", title=f"doc{n}.md"),)
    content, artifact = format_result(RetrievalResult(provider="local", query="q", hits=hits))
    message_append(
        thread=thread, type="tool", name="knowledge_search", content=content, artifact=artifact, trusted=True
    )
    match = re.search(r"\(#(knowledge-source-[a-f0-9]{32})\)", content)
    assert match is not None
    return match.group(1)


def _conversation(owner: User, turns: int) -> Thread:
    thread = thread_create(owner=owner, title="Memo")
    for n in range(turns):
        message_append(thread=thread, type="human", content=f"Question {n}?")
        handle = _tool(thread, n)
        message_append(thread=thread, type="ai", content=f"Answer [{n}](#{handle}).")
    return thread


def test_a_cold_render_validates_each_tool_message_once(owner: User) -> None:
    thread = _conversation(owner, 3)
    render_thread(thread_messages(thread=thread))
    assert validation_counter.count == 3
    assert render_counter.count == 3
    assert fragment_counter.count == 6  # 3 answers and 3 tool messages; human messages need none


def test_a_second_render_validates_nothing_and_renders_no_markdown(owner: User) -> None:
    thread = _conversation(owner, 3)
    first = render_thread(thread_messages(thread=thread))
    validation_counter.reset()
    render_counter.reset()

    fragment_counter.reset()
    second = render_thread(thread_messages(thread=thread))

    assert validation_counter.count == 0
    assert render_counter.count == 0
    assert fragment_counter.count == 0
    assert [v.html for v in second.messages] == [v.html for v in first.messages]
    assert [(e.evidence.handle, e.citations) for e in second.cited] == [
        (e.evidence.handle, e.citations) for e in first.cited
    ]


def test_appending_a_tool_message_validates_exactly_that_message(owner: User) -> None:
    thread = _conversation(owner, 3)
    render_thread(thread_messages(thread=thread))
    validation_counter.reset()
    render_counter.reset()

    fragment_counter.reset()
    handle = _tool(thread, 99)
    view = render_thread(thread_messages(thread=thread))

    assert validation_counter.count == 1
    assert render_counter.count == 0
    assert fragment_counter.count == 1
    assert handle in {entry.evidence.handle for entry in view.uncited}


def test_appending_an_answer_renders_exactly_that_answer(owner: User) -> None:
    thread = _conversation(owner, 3)
    handle = _tool(thread, 99)
    render_thread(thread_messages(thread=thread))
    validation_counter.reset()
    render_counter.reset()

    fragment_counter.reset()
    message_append(thread=thread, type="ai", content=f"New [answer](#{handle}).")
    view = render_thread(thread_messages(thread=thread))

    assert validation_counter.count == 0
    assert render_counter.count == 1
    assert fragment_counter.count == 1
    assert 'data-citation="resolved"' in view.messages[-1].html


def test_a_new_renderer_version_renders_every_answer_again(
    owner: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread = _conversation(owner, 3)
    render_thread(thread_messages(thread=thread))
    render_counter.reset()
    monkeypatch.setattr(thread_rendering, "RENDERER_VERSION", thread_rendering.RENDERER_VERSION + 1)

    render_thread(thread_messages(thread=thread))

    assert render_counter.count == 3


def test_an_answer_renders_again_when_the_evidence_before_it_changes(
    owner: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread = _conversation(owner, 2)
    render_thread(thread_messages(thread=thread))
    render_counter.reset()
    # A stricter reader (its cache version bumped) that accepts nothing.
    monkeypatch.setattr(evidence, "EVIDENCE_CACHE_VERSION", evidence.EVIDENCE_CACHE_VERSION + 1)
    monkeypatch.setattr(evidence, "read_sources", lambda name, content, artifact: {})

    view = render_thread(thread_messages(thread=thread))

    assert render_counter.count == 2
    assert all('data-citation="unresolved"' in v.html for v in view.messages if v.message.type == "ai")
    assert view.cited == ()


def test_a_warm_render_costs_two_cache_round_trips_whatever_the_thread_length(
    owner: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread = _conversation(owner, 4)
    render_thread(thread_messages(thread=thread))
    calls: list[tuple[str, int]] = []
    inside_get_many: list[bool] = []
    real_get_many, real_get = cache.get_many, cache.get

    def counting_get_many(keys: list[str]) -> dict[str, object]:
        calls.append(("get_many", len(keys)))
        inside_get_many.append(True)
        try:
            return real_get_many(keys)
        finally:
            inside_get_many.pop()

    def counting_get(*args: Any, **kwargs: Any) -> object:
        if not inside_get_many:  # the local-memory backend implements get_many with get
            calls.append(("get", 1))
        return real_get(*args, **kwargs)

    monkeypatch.setattr(cache, "get_many", counting_get_many)
    monkeypatch.setattr(cache, "get", counting_get)
    render_thread(thread_messages(thread=thread))

    # One read of the 4 tool messages' evidence, one of the 8 fragments (4 answers +
    # 4 tool messages; human messages need none), and no per-message reads.
    assert calls == [("get_many", 4), ("get_many", 8)]


def test_the_page_makes_the_same_number_of_queries_whatever_the_thread_length(owner: User) -> None:
    client = Client()
    client.force_login(owner)
    short, long = _conversation(owner, 2), _conversation(owner, 12)

    counts = []
    for thread in (short, long):
        with CaptureQueriesContext(connection) as queries:
            response = client.get(f"/threads/{thread.id}/")
        assert response.status_code == 200
        counts.append(len(queries))

    assert counts[0] == counts[1]


def test_an_800_message_thread_renders_one_hook_per_citation(owner: User) -> None:
    messages: list[dict[str, object]] = []
    written = 0
    previous: str | None = None
    for n in range(200):
        hits = (
            RetrievalHit(text=f"Excerpt {n} about topic {n % 7}.", title=f"doc-{n}.md"),
            RetrievalHit(text=f"Second excerpt {n}.", title=f"extra-{n}.md", page=n + 1),
        )
        content, artifact = format_result(RetrievalResult(provider="local", query=f"q{n}", hits=hits))
        handle = re.findall(r"\(#(knowledge-source-[a-f0-9]{32})\)", content)[0]
        answer = (
            f"Per [doc {n}](#{handle}) and [again](#user-content-{handle}), "
            f"not [forged](#knowledge-source-{'0' * 32}) nor [bad](#knowledge-source-{'A' * 32}); "
            f"`[code](#{handle})` is text."
        )
        if previous is not None:
            answer += f" Earlier: [prev](#{previous})."
        previous = handle
        written += len(find_citations(answer))
        messages += [
            {"type": "human", "content": f"Question {n}?"},
            {"type": "tool", "name": "knowledge_search", "content": content, "artifact": artifact},
            {"type": "ai", "content": answer},
            {"type": "system", "content": f"Checkpoint {n}."},
        ]
    thread = thread_import(owner=owner, title="Long", messages=messages, trusted=True)
    client = Client()
    client.force_login(owner)

    response = client.get(f"/threads/{thread.id}/")

    html = response.content.decode()
    assert response.status_code == 200
    assert len(messages) == 800
    assert html.count("data-citation=") == written == 200 * 5 - 1
    assert html.count('data-citation="resolved"') == 200 * 3 - 1
    assert html.count('data-citation="unresolved"') == 200
    assert html.count('data-citation="malformed"') == 200
    assert validation_counter.count == 200
    assert render_counter.count == 200


def test_a_warm_800_message_page_validates_nothing_and_renders_no_markdown(owner: User) -> None:
    messages: list[dict[str, object]] = []
    for n in range(200):
        hits = (RetrievalHit(text=f"Excerpt {n}.", title=f"doc-{n}.md"),)
        content, artifact = format_result(RetrievalResult(provider="local", query=f"q{n}", hits=hits))
        handle = re.findall(r"\(#(knowledge-source-[a-f0-9]{32})\)", content)[0]
        messages += [
            {"type": "human", "content": f"Question {n}?"},
            {"type": "tool", "name": "knowledge_search", "content": content, "artifact": artifact},
            {"type": "ai", "content": f"Answer [{n}](#{handle})."},
            {"type": "ai", "content": f"And again [{n}](#user-content-{handle})."},
        ]
    thread = thread_import(owner=owner, title="Long", messages=messages, trusted=True)
    client = Client()
    client.force_login(owner)
    first = client.get(f"/threads/{thread.id}/").content
    validation_counter.reset()
    render_counter.reset()

    second = client.get(f"/threads/{thread.id}/").content

    assert validation_counter.count == 0
    assert render_counter.count == 0
    # Only the CSRF token of the logout form is masked afresh per response.
    unmask = re.compile(rb'name="csrfmiddlewaretoken" value="[^"]+"')
    assert unmask.sub(b"", second) == unmask.sub(b"", first)
    assert second.count(b'data-citation="resolved"') == 400


def test_a_warm_page_never_reads_artifacts_and_a_cold_one_reads_them_in_one_query(owner: User) -> None:
    client = Client()
    client.force_login(owner)
    thread = _conversation(owner, 6)

    def artifact_reads() -> list[str]:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/threads/{thread.id}/").status_code == 200
        message_selects = [q["sql"] for q in queries if 'FROM "threads_message"' in q["sql"]]
        return [sql for sql in message_selects if '"artifact"' in sql]

    cold = artifact_reads()
    warm = artifact_reads()

    assert len(cold) == 1  # the six tool messages' artifacts, together
    assert warm == []


def test_a_tool_message_renders_again_when_the_reader_accepts_different_evidence(
    owner: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread = _conversation(owner, 2)
    version = evidence.EVIDENCE_CACHE_VERSION
    real_reader = evidence.read_sources
    # A reader that accepted nothing rendered (and cached) every tool message as unverified.
    monkeypatch.setattr(evidence, "EVIDENCE_CACHE_VERSION", version + 1)
    monkeypatch.setattr(evidence, "read_sources", lambda name, content, artifact: {})
    before = render_thread(thread_messages(thread=thread))
    assert all('data-hit-kind="unverified"' in v.html for v in before.messages if v.message.type == "tool")

    # A corrected reader accepts the evidence again: the panel needs each entry's body.
    monkeypatch.setattr(evidence, "EVIDENCE_CACHE_VERSION", version + 2)
    monkeypatch.setattr(evidence, "read_sources", real_reader)
    after = render_thread(thread_messages(thread=thread))

    assert len(after.cited) == 2
    assert all('data-hit-kind="source"' in v.html for v in after.messages if v.message.type == "tool")


def test_an_unreachable_shared_cache_degrades_to_a_fresh_render_not_a_500(
    owner: User, caplog: pytest.LogCaptureFixture, settings: Any
) -> None:
    thread = _conversation(owner, 2)
    # A real Redis client pointed at a port where nothing listens; Django swaps the
    # cache handler when the setting changes, and the fixture restores it afterwards.
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:9/0",
            "OPTIONS": {"socket_connect_timeout": 0.2},
        }
    }
    validation_counter.reset()
    client = Client()
    client.force_login(owner)

    response = client.get(f"/threads/{thread.id}/")

    assert response.status_code == 200
    assert response.content.decode().count('data-citation="resolved"') > 0
    assert validation_counter.count == 2
    assert "Cache unavailable" in caplog.text
