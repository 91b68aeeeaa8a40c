"""A read below the minimum safe renderer version decodes no row it replaces."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User

from knowledgeweb.knowledge import RetrievalHit, RetrievalResult
from knowledgeweb.threads.models import Message, MessageRender, Thread
from knowledgeweb.threads.rendering import version
from knowledgeweb.threads.selectors import thread_outline, thread_renders
from knowledgeweb.threads.services import message_append, thread_create
from tests.renderers import renderer_changed

V = version.RENDERER_VERSION

pytestmark = pytest.mark.django_db

RESULT = RetrievalResult(
    provider="local",
    query="q",
    hits=(RetrievalHit(text="Alpha excerpt.", title="alpha.md"), RetrievalHit(text="Beta.", title="b.md")),
)


def _thread(user: User, append_retrieval: Callable[..., Message]) -> Thread:
    thread = thread_create(owner=user, title="T")
    for _ in range(3):
        tool = append_retrieval(thread, RESULT)
        handle = re.findall(r"\(#(knowledge-source-[a-f0-9]{32})\)", tool.content)[0]
        message_append(thread=thread, type="ai", content=f"See [alpha](#{handle}).")
    return thread


def _decoded(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The renders read from the database from now on."""
    decoded: list[Any] = []
    from_db = MessageRender.from_db

    def counted(*args: Any, **kwargs: Any) -> MessageRender:
        row = from_db(*args, **kwargs)
        decoded.append(row.message_id)
        return row

    monkeypatch.setattr(MessageRender, "from_db", counted)
    return decoded


@pytest.mark.parametrize("fields", [None, ("message_id", "renderer_version", "html", "citations")])
def test_a_read_below_the_minimum_safe_version_decodes_only_the_rows_it_keeps(
    user: User,
    append_retrieval: Callable[..., Message],
    monkeypatch: pytest.MonkeyPatch,
    fields: tuple[str, ...] | None,
) -> None:
    thread = _thread(user, append_retrieval)
    outline = thread_outline(thread=thread)
    before = {key: row.html for key, row in thread_renders(thread=thread, messages=outline).items()}
    # The first tool message's render is servable still; every other one is below the minimum.
    kept = outline[0].id
    MessageRender.objects.filter(message_id=kept).update(renderer_version=V + 1)
    renderer_changed(monkeypatch, to=V + 1, min_safe=V + 1)
    decoded = _decoded(monkeypatch)

    renders = thread_renders(thread=thread, messages=outline, fields=fields)

    assert set(decoded) == {kept}  # once, or twice with ``fields`` (then the kept row whole)
    assert len(decoded) == (1 if fields is None else 2)
    assert {key: row.html for key, row in renders.items()} == before
    assert all(row.renderer_version == V + 1 for row in renders.values())


def test_a_servable_thread_is_read_in_one_query_as_before(
    user: User, append_retrieval: Callable[..., Message], monkeypatch: pytest.MonkeyPatch
) -> None:
    thread = _thread(user, append_retrieval)
    outline = thread_outline(thread=thread)
    decoded = _decoded(monkeypatch)
    renders = thread_renders(thread=thread, messages=outline)
    assert sorted(map(str, decoded)) == sorted(str(m.id) for m in outline) == sorted(map(str, renders))
