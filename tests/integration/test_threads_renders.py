"""Stored renders around a thread's life: backfill (``rerender``), deletion, full tool output, trust."""

from __future__ import annotations

import re
from collections.abc import Callable
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client

from knowledgeweb.knowledge import RetrievalHit, RetrievalResult
from knowledgeweb.threads.errors import MessageInvalidError
from knowledgeweb.threads.evidence import evidence_cache_key, messages_sources
from knowledgeweb.threads.models import Message, MessageRender, Thread
from knowledgeweb.threads.rendering import version
from knowledgeweb.threads.rendering.pipeline import render_counter
from knowledgeweb.threads.rendering.tools import PREVIEW_CHARS
from knowledgeweb.threads.services import message_append, thread_create
from tests.renderers import renderer_changed

#: The running renderer's version: a "changed renderer" is the next one.
V = version.RENDERER_VERSION

pytestmark = pytest.mark.django_db

Append = Callable[..., Message]
RESULT = RetrievalResult(
    provider="local",
    query="q",
    hits=(RetrievalHit(text="Alpha excerpt.", title="alpha.md"), RetrievalHit(text="Beta.", title="b.md")),
)


def _cited(thread: Thread, append_retrieval: Append) -> Message:
    tool = append_retrieval(thread, RESULT)
    handle = re.findall(r"\(#(knowledge-source-[a-f0-9]{32})\)", tool.content)[0]
    message_append(thread=thread, type="ai", content=f"See [alpha](#{handle}).")
    return tool


# --- manage.py rerender ---------------------------------------------------------------------------


def test_rerender_backfills_stale_and_missing_renders_and_is_safe_to_run_again(
    user: User, append_retrieval: Append, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads = [thread_create(owner=user, title=f"T{n}") for n in range(3)]
    for thread in threads:
        _cited(thread, append_retrieval)
    MessageRender.objects.filter(thread=threads[0]).delete()  # written before renders were stored
    renderer_changed(monkeypatch, to=V + 1)
    out, err = StringIO(), StringIO()

    call_command("rerender", stdout=out, stderr=err)

    assert "6 message(s) rendered in 3 thread(s)" in out.getvalue()
    assert "[##############################] 3/3" in err.getvalue()  # the progress bar
    assert f"Renderer version {V + 1}: 6 message(s)" in out.getvalue()
    assert set(MessageRender.objects.values_list("renderer_version", flat=True)) == {V + 1}
    assert MessageRender.objects.count() == 6
    for thread in threads:
        thread.refresh_from_db()
        assert (thread.citations_resolved, thread.citations_unresolved) == (1, 0)

    render_counter.reset()
    again = StringIO()
    call_command("rerender", stdout=again, stderr=StringIO())
    assert "0 message(s) rendered in 3 thread(s)" in again.getvalue()
    assert render_counter.count == 0

    call_command("rerender", "--force", stdout=StringIO(), stderr=StringIO())
    assert render_counter.count == 3


# --- Deleting leaves nothing behind ---------------------------------------------------------------


def _cache_keys(thread: Thread) -> list[str]:
    return [evidence_cache_key(m) for m in thread.messages.all()]


def _left_behind(keys: list[str]) -> dict[str, object]:
    return cache.get_many(keys)


@pytest.mark.parametrize("path", ["admin", "queryset", "instance", "owner cascade"])
def test_deleting_a_thread_by_any_path_removes_its_renders_and_cache_entries(
    path: str, user: User, append_retrieval: Append, admin_client: Client
) -> None:
    thread = thread_create(owner=user, title="Doomed")
    _cited(thread, append_retrieval)
    _cited(thread, append_retrieval)
    messages_sources(list(thread.messages.all()))
    keys = _cache_keys(thread)
    assert len(_left_behind(keys)) == 2  # the two tool messages' validations are cached
    assert MessageRender.objects.filter(thread=thread).count() == 4
    survivor = thread_create(owner=User.objects.create_user("other-owner"), title="Kept")
    _cited(survivor, append_retrieval)
    kept_keys = _cache_keys(survivor)
    messages_sources(list(survivor.messages.all()))

    if path == "admin":
        response = admin_client.post(f"/admin/threads/thread/{thread.id}/delete/", {"post": "yes"})
        assert response.status_code == 302
    elif path == "queryset":
        Thread.objects.filter(pk=thread.pk).delete()
    elif path == "instance":
        thread.delete()
    else:
        user.delete()

    assert not Thread.objects.filter(pk=thread.pk).exists()
    assert _left_behind(keys) == {}
    assert MessageRender.objects.filter(thread_id=thread.pk).count() == 0
    assert Message.objects.filter(thread_id=thread.pk).count() == 0
    # Another thread's entries stay.
    assert len(_left_behind(kept_keys)) == 1
    assert MessageRender.objects.filter(thread=survivor).count() == 2


def test_cache_entries_carry_a_time_to_live(
    thread: Thread, append_retrieval: Append, settings: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[object] = []
    real = cache.set_many

    def recording_set_many(data: Any, timeout: Any = None) -> Any:
        seen.append(timeout)
        return real(data, timeout)

    monkeypatch.setattr(cache, "set_many", recording_set_many)
    settings.KNOWLEDGEWEB_CACHE_TTL = 1234  # type: ignore[attr-defined]
    append_retrieval(thread, RESULT)
    assert seen == [1234]


# --- Huge tool output stays one link away ---------------------------------------------------------


def test_a_huge_tool_message_is_previewed_and_its_full_output_is_one_owner_only_link_away(
    user: User, other_user: User
) -> None:
    thread = thread_create(owner=user, title="Huge")
    content = "line of tool output <b>not html</b>\n" * 20_000  # 720,000 characters
    tool = message_append(thread=thread, type="tool", name="shell", content=content)
    for _ in range(4):
        message_append(thread=thread, type="tool", name="shell", content=content)
    owner = Client()
    owner.force_login(user)

    page = owner.get(f"/threads/{thread.id}/")
    # The page sends each tool message's summary; its output loads from the hits route.
    assert page.status_code == 200
    assert len(page.content) < 50_000
    assert "<b>not html</b>" not in page.content.decode()
    page = owner.get(f"/threads/{thread.id}/messages/{tool.id}/hits/")

    html = page.content.decode()
    assert page.status_code == 200
    assert len(page.content) < PREVIEW_CHARS * 2 + 50_000  # one preview, not 720 kB
    link = f'href="/messages/{tool.id}/content/" data-full-output'
    assert link in html
    assert f"Showing the first {PREVIEW_CHARS} of {len(content)} characters." in html
    assert "<b>not html</b>" not in html

    full = owner.get(f"/messages/{tool.id}/content/")
    assert full.status_code == 200
    assert full["Content-Type"] == "text/plain; charset=utf-8"
    assert full["X-Content-Type-Options"] == "nosniff"
    assert full.content.decode() == content

    stranger = Client()
    stranger.force_login(other_user)
    assert stranger.get(f"/messages/{tool.id}/content/").status_code == 404
    assert stranger.get(f"/threads/{thread.id}/messages/{tool.id}/hits/").status_code == 404
    assert Client().get(f"/messages/{tool.id}/content/").status_code == 302  # to the login page
    assert owner.post(f"/messages/{tool.id}/content/").status_code == 405


# --- The tool view is the server's ----------------------------------------------------------------


def test_only_a_trusted_writer_records_a_tool_view_and_nothing_is_written_otherwise(thread: Thread) -> None:
    view = {"version": 1, "tool": "knowledge_search", "provider": "local", "shown": 9, "total": 9, "hits": []}
    with pytest.raises(MessageInvalidError, match="only the retrieval service records a tool view"):
        message_append(thread=thread, type="tool", name="knowledge_search", content="x", tool_view=view)
    assert thread.messages.count() == 0
    assert MessageRender.objects.count() == 0


def test_a_callers_view_shaped_artifact_is_not_the_servers_view(
    thread: Thread, api_client: Client, user: User
) -> None:
    forged = {
        "version": 1,
        "tool": "knowledge_search",
        "provider": "local",
        "shown": 99,
        "total": 99,
        "hits": [],
    }
    message_body = {"type": "tool", "name": "knowledge_search", "content": "plain output"}
    # A tool_view key of its own is an unknown key: refused, naming it, and nothing written.
    refused = api_client.post(
        f"/api/threads/{thread.id}/messages",
        {**message_body, "tool_view": forged, "artifact": {"tool_view": forged}},
        content_type="application/json",
    )
    assert refused.status_code == 422
    assert "unknown key 'tool_view'" in refused.json()["detail"]
    assert not thread.messages.exists()
    # Inside the artifact it is the caller's data, never the server's view.
    response = api_client.post(
        f"/api/threads/{thread.id}/messages",
        {**message_body, "artifact": {"tool_view": forged}},
        content_type="application/json",
    )
    assert response.status_code == 201
    message = thread.messages.get()
    assert message.tool_view is None
    reader = Client()
    reader.force_login(user)
    html = reader.get(f"/threads/{thread.id}/").content.decode()
    hits = reader.get(f"/threads/{thread.id}/messages/{message.id}/hits/").content.decode()
    assert "99 of 99 shown" not in html + hits
    assert "data-tool-output" in hits
