"""The thread list and the citation viewer, through Django's real client."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from knowledgeweb.knowledge import (
    RagflowLocator,
    RetrievalHit,
    RetrievalResult,
    format_result,
    format_result_view,
)
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.services import message_append, thread_create
from tests.pages import with_hits

pytestmark = pytest.mark.django_db


@pytest.fixture
def reader() -> User:
    return User.objects.create_user("reader", password="pw-reader-1")


@pytest.fixture
def client_for(reader: User) -> Client:
    client = Client()
    client.force_login(reader)
    return client


def _shared_tool(thread: Thread, *hits: RetrievalHit, tool: str = "knowledge_search") -> str:
    formatted = format_result_view(RetrievalResult(provider="local", query="q", hits=hits, tool=tool))
    message_append(
        thread=thread,
        type="tool",
        name=tool,
        content=formatted.content,
        artifact=formatted.artifact,
        trusted=True,
        tool_view=formatted.view,  # as the retrieval service records it
    )
    return formatted.content


def _handle(content: str) -> str:
    match = re.search(r"\(#(knowledge-source-[a-f0-9]{32})\)", content)
    assert match is not None
    return match.group(1)


def test_it_redirects_anonymous_readers_to_the_login_page() -> None:
    response = Client().get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_it_redirects_anonymous_readers_of_a_thread_to_the_login_page(reader: User) -> None:
    thread = thread_create(owner=reader, title="Private cats")
    message_append(thread=thread, type="human", content="secret question")
    response = Client().get(f"/threads/{thread.id}/")
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next=/threads/{thread.id}/"


def test_the_thread_list_makes_the_same_number_of_queries_whatever_the_number_of_threads(
    reader: User, client_for: Client
) -> None:
    counts = []
    for total in (2, 12):
        while Thread.objects.filter(owner=reader).count() < total:
            thread = thread_create(owner=reader, title="Cats")
            message_append(thread=thread, type="human", content="Why?")
        with CaptureQueriesContext(connection) as queries:
            response = client_for.get("/")
        assert response.status_code == 200
        assert response.content.count(b"data-thread-id=") == total
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_it_lists_only_the_readers_own_threads(reader: User, client_for: Client) -> None:
    other = User.objects.create_user("other", password="pw-other-1")
    thread_create(owner=reader, title="Mine about cats")
    thread_create(owner=other, title="Theirs about dogs")
    response = client_for.get("/")
    assert response.status_code == 200
    assert b"Mine about cats" in response.content
    assert b"Theirs about dogs" not in response.content


def test_it_answers_404_for_another_users_thread(client_for: Client) -> None:
    other = User.objects.create_user("other", password="pw-other-1")
    theirs = thread_create(owner=other, title="Private")
    message_append(thread=theirs, type="human", content="secret question")
    response = client_for.get(f"/threads/{theirs.id}/")
    assert response.status_code == 404
    assert b"secret question" not in response.content


def test_it_renders_a_resolved_citation_and_its_panel_entry(reader: User, client_for: Client) -> None:
    thread = thread_create(owner=reader, title="Cats")
    message_append(thread=thread, type="human", content="Why do cats purr?")
    content = _shared_tool(thread, RetrievalHit(text="Cats purr when content.", title="cats.md"))
    handle = _handle(content)
    source_id = handle.removeprefix("knowledge-source-")
    message_append(thread=thread, type="ai", content=f"They purr [when content](#user-content-{handle}).")

    html = with_hits(client_for, client_for.get(f"/threads/{thread.id}/").content.decode())

    (hook,) = re.findall(r'<a class="citation" data-citation="resolved"[^>]*>.*?</a>', html)
    assert hook.startswith(
        f'<a class="citation" data-citation="resolved" data-source-id="{source_id}" href="#{handle}" id="cite-'
    )
    # The source's number and its own title, never the answer's label (kept for the dialog);
    # the label names another source, so the hook carries the visible sign and the words.
    assert hook.endswith(
        '><span class="citation-number">[1]</span><span class="visually-hidden"> cats.md</span>'
        '<span class="citation-flag" aria-hidden="true">≠</span>'
        '<span class="visually-hidden"> (label names another source)</span></a>'
    )
    assert 'data-issue="label-mismatch"' in hook
    assert 'data-label="when content"' in hook
    assert ">when content<" not in html
    assert html.count(f'id="{handle}"') == 1
    assert 'data-citations="1"' in html


def test_it_sends_a_csp_without_inline_script(reader: User, client_for: Client) -> None:
    thread = thread_create(owner=reader, title="Cats")
    response = client_for.get(f"/threads/{thread.id}/")
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert "<script>" not in response.content.decode()
    assert ' style="' not in response.content.decode()


def test_it_shows_native_sources_with_their_pages(reader: User, client_for: Client) -> None:
    thread = thread_create(owner=reader, title="Native")
    hit = RetrievalHit(
        text="Native chunk text.",
        title="report.pdf",
        dataset_name="Reports",
        locator=RagflowLocator(dataset_id="d1", document_id="doc1", chunk_id="c1", pages=(4, 5)),
    )
    content, artifact = format_result(RetrievalResult(provider="ragflow", query="q", hits=(hit,)))
    message_append(
        thread=thread, type="tool", name="knowledge_search", content=content, artifact=artifact, trusted=True
    )
    handle = re.search(r"\(#(knowledge-[a-f0-9]{32}-1)\)", content)
    assert handle is not None
    message_append(thread=thread, type="ai", content=f"See [1](#{handle.group(1)}).")

    html = with_hits(client_for, client_for.get(f"/threads/{thread.id}/").content.decode())

    native_id = handle.group(1).removeprefix("knowledge-")
    assert re.search(
        f'data-source-id="{native_id}" href="#{handle.group(1)}" id="cite-[0-9a-f]+-1">'
        '<span class="citation-number">\\[1\\]</span>',
        html,
    )
    assert '<dd data-field="page">4, 5</dd>' in html
    assert '<dd data-field="dataset">Reports</dd>' in html


def test_it_shows_an_errored_tool_message_with_its_reason(reader: User, client_for: Client) -> None:
    thread = thread_create(owner=reader, title="Failure")
    message_append(
        thread=thread,
        type="tool",
        name="knowledge_search",
        content="The provider timed out after 30 s.",
        status="error",
    )
    html = with_hits(client_for, client_for.get(f"/threads/{thread.id}/").content.decode())
    assert 'data-tool-status="error"' in html
    assert "The provider timed out after 30 s." in html


def test_it_links_relation_edges_to_their_evidence_and_marks_graph_facts(
    reader: User, client_for: Client
) -> None:
    thread = thread_create(owner=reader, title="Graph")
    _shared_tool(
        thread,
        RetrievalHit(text="Alice joined Acme in 2020.", title="people.md"),
        RetrievalHit(text="Alice", kind="entity", entity_type="person", title="Alice"),
        RetrievalHit(
            text="works for", kind="relation", source_entity="Alice", target_entity="Acme", evidence=(1,)
        ),
        RetrievalHit(text="rivals", kind="relation", source_entity="Acme", target_entity="Initech"),
        tool="entity_relations_search",
    )
    message = thread.messages.get()
    html = with_hits(client_for, client_for.get(f"/threads/{thread.id}/").content.decode())

    assert f'id="hit-{message.id}-1"' in html
    # A hit's retrieval position is "hit n", never a bracketed number a source could be confused with.
    assert f'href="#hit-{message.id}-1" data-edge-evidence="1">hit 1 (people.md)</a>' in html
    assert html.count("unattributed graph fact") == 3
    # The reader sees the phrase the model read.
    assert "Evidence: none (no document evidence was retrieved for this relation)." in message.content
    assert "Evidence: none (no document evidence was retrieved for this relation)." in html


def test_it_logs_a_reader_in_through_the_login_page(reader: User) -> None:
    client = Client()
    page = client.get("/accounts/login/")
    assert page.status_code == 200
    assert b'data-form="login"' in page.content

    response = client.post("/accounts/login/", {"username": "reader", "password": "pw-reader-1"})

    assert response.status_code == 302
    assert response["Location"] == "/"
    assert client.get("/").status_code == 200


def test_it_refuses_a_wrong_password_with_a_clear_message(reader: User) -> None:
    response = Client().post("/accounts/login/", {"username": "reader", "password": "wrong"})
    assert response.status_code == 200
    assert b"didn't match" in response.content


def test_it_logs_out_with_a_post_form(client_for: Client) -> None:
    page = client_for.get("/").content.decode()
    assert '<form class="logout-form" method="post" action="/accounts/logout/">' in page

    response = client_for.post("/accounts/logout/")

    assert response.status_code == 302
    assert client_for.get("/").status_code == 302


def test_it_shows_tool_content_as_text_and_unverified_citations_as_plain_labels(
    reader: User, client_for: Client
) -> None:
    thread = thread_create(owner=reader, title="Untrusted")
    content, artifact = format_result(
        RetrievalResult(
            provider="local", query="q", hits=(RetrievalHit(text="Claimed fact.", title="doc.md"),)
        )
    )
    hostile = content + "\n\n<script>alert(1)</script><img src=x onerror=alert(1)>"
    # A caller's artifact loses its reserved keys, so nothing here is evidence.
    message_append(thread=thread, type="tool", name="knowledge_search", content=hostile, artifact=artifact)

    html = with_hits(client_for, client_for.get(f"/threads/{thread.id}/").content.decode())

    # A caller's tool message has no server view: shown as its text, its imitation of
    # a search's layout is not read back into hits.
    assert "data-tool-output" in html
    assert "data-hit-kind" not in html
    assert "[citation:doc.md](#knowledge-source-" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<script>alert" not in html
    assert "data-source-entry" not in html
    assert "data-citation=" not in html


def test_it_answers_404_for_a_thread_that_does_not_exist(client_for: Client) -> None:
    response = client_for.get("/threads/00000000-0000-0000-0000-000000000000/")
    assert response.status_code == 404
    assert b"or it belongs to someone else" in response.content
