"""Renders stored at write (docs/decisions/0016-render-at-write.md), observed through the counters.

Writes validate each tool message once and render each answer once; views,
the citation report and the export parse nothing and never write. After a
renderer change (a new renderer version) a view serves the renders as stored
until ``thread_rerender`` replaces them; a render below the minimum safe version
is rendered in memory for each view, never stored by it.
"""

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

from knowledgeweb.knowledge import (
    RetrievalHit,
    RetrievalResult,
    find_citations,
    format_result,
    format_result_view,
)
from knowledgeweb.knowledge.linkgrammar import parse_counter
from knowledgeweb.threads.evidence import validation_counter
from knowledgeweb.threads.interchange.imports import thread_import
from knowledgeweb.threads.models import MessageRender, Thread
from knowledgeweb.threads.rendering import version
from knowledgeweb.threads.rendering.pipeline import render_counter
from knowledgeweb.threads.selectors import renders as stored_renders
from knowledgeweb.threads.selectors import thread_citations, thread_messages
from knowledgeweb.threads.services import message_append, thread_create
from knowledgeweb.threads.services import messages as message_services
from knowledgeweb.threads.services.renders import thread_rerender
from knowledgeweb.web.rendering.thread import render_thread
from tests.renderers import renderer_changed

#: The running renderer's version: a "changed renderer" is the next one.
V = version.RENDERER_VERSION

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    cache.clear()
    validation_counter.reset()
    render_counter.reset()
    parse_counter.reset()
    yield
    cache.clear()


@pytest.fixture
def owner() -> User:
    return User.objects.create_user("owner", password="pw-owner-1")


def _tool(thread: Thread, n: int) -> str:
    hits = (RetrievalHit(text=f"Fact number {n}.", title=f"doc{n}.md"),)
    formatted = format_result_view(RetrievalResult(provider="local", query="q", hits=hits))
    message_append(
        thread=thread,
        type="tool",
        name="knowledge_search",
        content=formatted.content,
        artifact=formatted.artifact,
        trusted=True,
        tool_view=formatted.view,
    )
    match = re.search(r"\(#(knowledge-source-[a-f0-9]{32})\)", formatted.content)
    assert match is not None
    return match.group(1)


def _conversation(owner: User, turns: int) -> Thread:
    thread = thread_create(owner=owner, title="Memo")
    for n in range(turns):
        message_append(thread=thread, type="human", content=f"Question {n}?")
        handle = _tool(thread, n)
        message_append(thread=thread, type="ai", content=f"Answer [{n}](#{handle}).")
    return thread


def _view(thread: Thread) -> Any:
    thread.refresh_from_db()
    return render_thread(thread, thread_messages(thread=thread, with_artifacts=False))


def _versions(thread: Thread) -> set[int]:
    return set(MessageRender.objects.filter(thread=thread).values_list("renderer_version", flat=True))


def test_an_append_validates_a_tool_message_once_and_renders_an_answer_once(owner: User) -> None:
    thread = thread_create(owner=owner, title="Counts")
    handle = _tool(thread, 1)
    assert (validation_counter.count, render_counter.count) == (1, 0)
    message_append(thread=thread, type="ai", content=f"Answer [one](#{handle}).")
    assert (validation_counter.count, render_counter.count) == (1, 1)
    message_append(thread=thread, type="human", content="Thanks.")
    assert (validation_counter.count, render_counter.count) == (1, 1)
    thread.refresh_from_db()
    assert (thread.citations_resolved, thread.citations_unresolved, thread.citations_malformed) == (1, 0, 0)


def test_views_the_report_and_the_export_parse_and_validate_nothing(owner: User) -> None:
    thread = _conversation(owner, 3)
    client = Client()
    client.force_login(owner)
    validation_counter.reset()
    render_counter.reset()
    parse_counter.reset()

    for _ in range(2):
        page = client.get(f"/threads/{thread.id}/")
        assert page.status_code == 200
        assert page.content.decode().count('data-citation="resolved"') == 3
    report = thread_citations(thread=thread)
    export = client.get(f"/threads/{thread.id}/")
    assert export.status_code == 200
    assert [c.state for entry in report for c in entry.citations] == ["resolved"] * 3

    assert (validation_counter.count, render_counter.count, parse_counter.count) == (0, 0, 0)


def test_after_a_renderer_change_a_view_serves_the_stored_renders_until_the_rerender(
    owner: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread = _conversation(owner, 3)
    before = _view(thread)
    render_counter.reset()
    validation_counter.reset()
    renderer_changed(monkeypatch, to=V + 1)

    with CaptureQueriesContext(connection) as queries:
        served = _view(thread)

    assert render_counter.count == 0  # served as stored: an older render is still safe
    assert not [q["sql"] for q in queries if not q["sql"].startswith("SELECT")]
    assert _versions(thread) == {V}
    assert [v.html for v in served.messages] == [v.html for v in before.messages]

    assert thread_rerender(thread=thread) == 9
    assert render_counter.count == 3  # the three answers, each against the evidence before it
    assert validation_counter.count == 3  # the memo is per version: each tool message once more
    assert _versions(thread) == {V + 1}
    render_counter.reset()
    after = _view(thread)
    assert render_counter.count == 0
    assert [v.html for v in after.messages] == [v.html for v in before.messages]


def test_a_render_below_the_minimum_safe_version_is_rendered_for_each_view_and_never_stored(
    owner: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread = _conversation(owner, 3)
    before = _view(thread)
    render_counter.reset()
    renderer_changed(monkeypatch, to=V + 1, min_safe=V + 1)

    for views in (1, 2):
        with CaptureQueriesContext(connection) as queries:
            shown = _view(thread)
        assert render_counter.count == 3 * views
        assert not [q["sql"] for q in queries if not q["sql"].startswith("SELECT")]
        assert _versions(thread) == {V}
        assert [v.html for v in shown.messages] == [v.html for v in before.messages]

    thread_rerender(thread=thread)
    render_counter.reset()
    _view(thread)
    assert render_counter.count == 0
    assert _versions(thread) == {V + 1}


def test_a_message_without_a_stored_render_is_rendered_in_memory_until_the_rerender(owner: User) -> None:
    thread = _conversation(owner, 3)
    last_answer = thread.messages.filter(type="ai").last()
    assert last_answer is not None
    MessageRender.objects.filter(message=last_answer).delete()  # e.g. written before renders were stored
    render_counter.reset()

    view = _view(thread)

    assert render_counter.count == 1
    assert view.messages[-1].resolved == 1
    assert MessageRender.objects.filter(thread=thread).count() == 8
    assert thread_rerender(thread=thread) == 1
    assert MessageRender.objects.filter(thread=thread).count() == 9


def test_an_answer_prepared_before_a_racing_tool_message_is_rendered_again_under_the_lock(
    owner: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread = thread_create(owner=owner, title="Race")
    hits = (RetrievalHit(text="Fact number 7.", title="doc7.md"),)
    formatted = format_result_view(RetrievalResult(provider="local", query="q", hits=hits))
    handle = re.findall(r"\(#(knowledge-source-[a-f0-9]{32})\)", formatted.content)[0]
    real_prepare = message_services.render_prepare
    raced: list[bool] = []

    def racing(thread_: Thread, message: Any) -> Any:
        prepared = real_prepare(thread_, message)
        if message.type == "ai" and not raced:
            raced.append(True)  # another writer appends the evidence before this one locks
            _tool(thread_, 7)
        return prepared

    monkeypatch.setattr(message_services, "render_prepare", racing)
    answer = message_append(thread=thread, type="ai", content=f"It is [seven](#{handle}).")

    assert answer.seq == 2
    (entry,) = thread_citations(thread=thread)
    assert [c.state for c in entry.citations] == ["resolved"]
    thread.refresh_from_db()
    assert thread.citations_resolved == 1


def test_the_reader_changing_re_validates_and_re_renders_tool_messages(
    owner: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread = _conversation(owner, 2)
    # A reader that accepted nothing: every tool message unverified, no answer resolved.
    monkeypatch.setattr(stored_renders, "messages_sources", lambda messages: {m.id: {} for m in messages})
    renderer_changed(monkeypatch, to=V + 1)
    thread_rerender(thread=thread)
    before = _view(thread)
    assert all('data-hit-kind="unverified"' in v.html for v in before.messages if v.message.type == "tool")
    assert before.cited == ()
    thread.refresh_from_db()
    assert thread.citations_unresolved == 2

    # The reader is corrected: a new version (and so a new memo namespace), the evidence validates again.
    monkeypatch.undo()
    renderer_changed(monkeypatch, to=V + 2)
    validation_counter.reset()
    thread_rerender(thread=thread)
    after = _view(thread)

    assert validation_counter.count == 2
    assert len(after.cited) == 2
    assert all('data-hit-kind="source"' in v.html for v in after.messages if v.message.type == "tool")
    thread.refresh_from_db()
    assert (thread.citations_resolved, thread.citations_unresolved) == (2, 0)


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
    # The import validated each tool message once and rendered each answer once.
    assert validation_counter.count == 200
    assert render_counter.count == 200
    validation_counter.reset()
    render_counter.reset()
    parse_counter.reset()
    client = Client()
    client.force_login(owner)

    # The page is windowed (issue 25): every window, read in turn, shows every hook once.
    pages = []
    for number in range(1, 9):
        response = client.get(f"/threads/{thread.id}/?window={number}")
        assert response.status_code == 200
        pages.append(response.content.decode())
    assert client.get(f"/threads/{thread.id}/?window=9").status_code == 404
    html = "".join(pages)
    assert len(messages) == 800
    assert html.count("data-citation=") == written == 200 * 5 - 1
    assert html.count('data-citation="resolved"') == 200 * 3 - 1
    assert html.count('data-citation="unresolved"') == 200
    assert html.count('data-citation="malformed"') == 200
    # Everything was rendered when the thread was imported; the page renders nothing.
    assert validation_counter.count == 0
    assert render_counter.count == 0
    assert parse_counter.count == 0


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
    validation_counter.reset()
    render_counter.reset()
    first = client.get(f"/threads/{thread.id}/").content
    assert (validation_counter.count, render_counter.count) == (0, 0)

    second = client.get(f"/threads/{thread.id}/").content

    assert validation_counter.count == 0
    assert render_counter.count == 0
    # Only the CSRF token of the logout form is masked afresh per response.
    unmask = re.compile(rb'name="csrfmiddlewaretoken" value="[^"]+"')
    assert unmask.sub(b"", second) == unmask.sub(b"", first)
    # The page opens on the last window: 100 of the 800 messages, 25 turns of two answers.
    assert second.count(b'data-citation="resolved"') == 50


def test_a_page_never_reads_artifacts_unless_a_stale_tool_message_must_be_validated_again(
    owner: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = Client()
    client.force_login(owner)
    thread = _conversation(owner, 6)

    def artifact_reads() -> list[str]:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/threads/{thread.id}/").status_code == 200
        message_selects = [q["sql"] for q in queries if 'FROM "threads_message"' in q["sql"]]
        return [sql for sql in message_selects if '"artifact"' in sql]

    assert artifact_reads() == []
    cache.clear()
    renderer_changed(monkeypatch, to=V + 1)  # older renders are served as stored: nothing to validate
    assert artifact_reads() == []
    renderer_changed(monkeypatch, to=V + 1, min_safe=V + 1)  # rendered in memory: the tool messages validated
    assert len(artifact_reads()) == 1  # the six tool messages' artifacts, together
    assert artifact_reads() == []  # their validation is memoized, though nothing was stored


def test_an_unreachable_shared_cache_costs_nothing_to_a_page_rendered_at_write(
    owner: User, caplog: pytest.LogCaptureFixture, settings: Any, monkeypatch: pytest.MonkeyPatch
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
    assert response.content.decode().count('data-citation="resolved"') == 2
    assert validation_counter.count == 0

    # Past a safety fix the unsafe tool messages are validated afresh, and the outage logged.
    renderer_changed(monkeypatch, to=V + 1, min_safe=V + 1)
    response = client.get(f"/threads/{thread.id}/")
    assert response.status_code == 200
    assert response.content.decode().count('data-citation="resolved"') == 2
    assert validation_counter.count == 2
    assert "Cache unavailable" in caplog.text
