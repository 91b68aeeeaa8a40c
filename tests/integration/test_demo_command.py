"""``manage.py demo``: the sample corpus, a demo user and binding, and demo threads, once."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.demo.services import (
    BINDING,
    COLLECTION,
    DEFAULT_DEMO_PASSWORD,
    DEMO_THREADS,
    UNRESOLVED_HANDLE,
)
from knowledgeweb.library.models import Chunk, Collection, Document
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.selectors import thread_citations
from knowledgeweb.threads.services import thread_create

pytestmark = pytest.mark.django_db


def _demo(*args: str) -> str:
    out = io.StringIO()
    call_command("demo", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def _snapshot() -> dict[str, object]:
    return {
        "collections": list(Collection.objects.values_list("name", flat=True)),
        "documents": sorted(Document.objects.values_list("id", "title", "content_hash")),
        "chunks": sorted(Chunk.objects.values_list("id", "page", "text")),
        "users": list(User.objects.values_list("username", flat=True)),
        "bindings": list(KnowledgeBinding.objects.values_list("name", "provider")),
        "binding_users": list(
            KnowledgeBinding.users.through.objects.values_list("knowledgebinding_id", "user_id")
        ),
        "threads": sorted(Thread.objects.values_list("id", "title")),
        "messages": sorted(Message.objects.values_list("id", "digest")),
    }


def _thread(title: str) -> Thread:
    return Thread.objects.get(title=title, owner__username="demo")


def test_running_the_demo_twice_leaves_one_copy_of_everything() -> None:
    _demo()
    first = _snapshot()

    output = _demo()

    assert _snapshot() == first
    assert first["collections"] == [COLLECTION]
    assert len(first["documents"]) == 5  # type: ignore[arg-type]
    assert first["users"] == ["demo"]
    assert first["bindings"] == [(BINDING, "local")]
    assert sorted(title for _, title in first["threads"]) == sorted(t.title for t in DEMO_THREADS)  # type: ignore[attr-defined]
    assert "0 created, 0 updated, 5 unchanged, 0 skipped" in output
    assert output.count("Kept thread") == len(DEMO_THREADS)


def test_it_prints_credentials_that_log_in_and_open_every_demo_thread_with_resolved_citations() -> None:
    output = _demo()

    assert "username: demo" in output
    assert f"password: {DEFAULT_DEMO_PASSWORD}" in output
    client = Client()
    assert client.login(username="demo", password=DEFAULT_DEMO_PASSWORD)
    for spec in DEMO_THREADS:
        page = client.get(f"/threads/{_thread(spec.title).id}/")
        assert page.status_code == 200
        assert 'data-citation="resolved"' in page.content.decode()


def test_the_demo_password_can_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNOWLEDGEWEB_DEMO_PASSWORD", "another-local-secret")

    output = _demo()

    assert "password: another-local-secret" in output
    assert Client().login(username="demo", password="another-local-secret")
    assert not Client().login(username="demo", password=DEFAULT_DEMO_PASSWORD)


def test_the_demo_threads_show_what_they_claim() -> None:
    _demo()

    resolved = _thread("Demo: how citations are resolved")
    [answer] = thread_citations(thread=resolved)
    assert answer.citations
    assert {c.state for c in answer.citations} == {"resolved"}

    gettysburg = _thread("Demo: the Gettysburg Address, with its source URL")
    [answer] = thread_citations(thread=gettysburg)
    urls = {c.source.url for c in answer.citations if c.source}
    assert "https://en.wikisource.org/wiki/Gettysburg_Address" in urls

    unresolved = _thread("Demo: an honestly unresolved citation")
    answer, note = thread_citations(thread=unresolved)
    assert {c.state for c in answer.citations} == {"resolved"}
    assert any(c.source and c.source.page for c in answer.citations)
    assert [(c.state, c.href) for c in note.citations] == [("unresolved", f"#{UNRESOLVED_HANDLE}")]
    assert "no tool message in this thread provides" in note.message.content

    budget = _thread("Demo: tool output cut by the output budget")
    tool = budget.messages.get(type="tool")
    assert "[Output truncated to fit the tool output budget of" in tool.content
    [answer] = thread_citations(thread=budget)
    assert answer.citations
    assert {c.state for c in answer.citations} == {"resolved"}


def test_rebuild_replaces_the_demo_threads_without_duplicating_them() -> None:
    _demo()
    before = set(Thread.objects.values_list("id", flat=True))

    output = _demo("--rebuild")

    after = set(Thread.objects.values_list("id", flat=True))
    assert len(after) == len(DEMO_THREADS)
    assert before.isdisjoint(after)
    assert output.count("Built thread") == len(DEMO_THREADS)
    assert Document.objects.count() == 5


def test_the_demo_keeps_other_users_threads_and_bindings(user: User) -> None:
    other = thread_create(owner=user, title="Demo: how citations are resolved")

    _demo()
    _demo("--rebuild")

    assert Thread.objects.filter(pk=other.pk).exists()
    assert Thread.objects.filter(owner__username="demo").count() == len(DEMO_THREADS)


def test_the_demo_binding_serves_only_the_demo_collection_and_names_the_key_prefix() -> None:
    from knowledgeweb.library.selectors import collections_for_user
    from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest

    output = _demo()
    assert "KNOWLEDGEWEB_KEY_RAGFLOW" in output
    private = collection_get_or_create(name="private")
    document_ingest(
        collection=private,
        source_key="p",
        content_hash="p",
        title="Private",
        source_url="",
        chunks=[ChunkDraft("Private notes.")],
    )
    demo = User.objects.get(username="demo")
    assert collections_for_user(demo) == {Collection.objects.get(name=COLLECTION).pk}
    binding = KnowledgeBinding.objects.get(name=BINDING)
    assert (binding.scope, binding.api_key_env) == ("selected", "")
