"""Streamed answers in a real browser: sentences appear with citations resolved, before anything is stored."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from knowledgeweb.bindings.services import binding_create
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest
from knowledgeweb.threads.models import Message, Thread
from tests.e2e.watching import Watched
from tests.standins.chat_server import ChatStandin, Reply, citing_model, serve

pytestmark = pytest.mark.e2e

OpenPage = Callable[..., tuple[Page, Watched]]


@pytest.fixture
def model_server(reader: tuple[User, Any]) -> Iterator[ChatStandin]:
    user = reader[0]
    binding_create(name="local", provider="local", tools=["knowledge_search"], users=[user])
    collection = collection_get_or_create(name="birds")
    for number in range(2):
        document_ingest(
            collection=collection,
            source_key=f"k{number}",
            content_hash=f"k{number}",
            title=f"Kingfisher note {number}",
            source_url="",
            chunks=[
                ChunkDraft(f"Kingfishers dive for fish from a perch, note {number}. They nest in banks.")
            ],
        )

    def paused(body: dict[str, Any]) -> Reply:
        reply = citing_model(body)
        # Hold the stream after the first sentence and its citation, until the test releases it.
        reply.pause_after = len(reply.text.split(". ")[0].split()) + 2
        return reply

    with serve(paused) as server:
        model = AnswerModel(name="standin", base_url=server.base_url, model="standin-1", timeout=30)
        model.full_clean()
        model.save()
        model.users.add(user)
        yield server


def test_the_answer_streams_with_resolved_citations_before_anything_is_stored(
    model_server: ChatStandin, open_page: OpenPage
) -> None:
    page, watched = open_page("/ask/")
    page.locator('[data-field="question"]').fill("kingfishers")
    page.locator('[data-field="composer"]').select_option("standin")
    page.locator('[data-action="ask"]').click()

    live = page.locator("[data-live-text]")
    expect(live.locator('[data-citation="resolved"]').first).to_have_text("[1]")
    expect(live).to_contain_text("Kingfishers dive for fish from a perch")
    # Mid-stream: shown, not stored.
    expect(page.locator("[data-live-status]")).not_to_contain_text("Answer stored")
    assert Thread.objects.count() == 0

    model_server.release.set()
    status = page.locator("[data-live-status]")
    expect(status).to_contain_text("Answer stored. 2 of 2 citations have a source found.")
    expect(live.locator('[data-citation="resolved"]')).to_have_count(2)
    page.locator("[data-live-thread]").click()
    expect(page.locator('a.citation[data-citation="resolved"]')).to_have_count(2)
    assert Message.objects.filter(type="ai", status="success").count() == 1
    assert watched.errors == []


def test_without_javascript_the_form_posts_and_lands_on_the_finished_thread(
    model_server: ChatStandin, open_page: OpenPage
) -> None:
    model_server.release.set()
    page, _watched = open_page("/ask/", javascript=False)
    page.locator('[data-field="question"]').fill("kingfishers")
    page.locator('[data-field="composer"]').select_option("standin")
    page.locator('[data-action="ask"]').click()

    expect(page.locator('a.citation[data-citation="resolved"]')).to_have_count(2)
    assert page.url.endswith(f"/threads/{Thread.objects.get().id}/")


def test_a_follow_up_streams_from_the_thread_page(model_server: ChatStandin, open_page: OpenPage) -> None:
    model_server.release.set()
    page, watched = open_page("/ask/", javascript=False)
    page.locator('[data-field="question"]').fill("kingfishers")
    page.locator('[data-action="ask"]').click()  # the extractive default
    thread = Thread.objects.get()
    page, watched = open_page(f"/threads/{thread.id}/")

    form = page.locator('[data-form="follow-up"]')
    form.locator('[data-field="question"]').fill("where do they nest?")
    form.locator('[data-field="composer"]').select_option("standin")
    form.locator('[data-action="follow-up"]').click()

    status = page.locator(".follow-up [data-live-status]")
    expect(status).to_contain_text("Answer stored. 2 of 2 citations have a source found.")
    # On the thread page a resolved citation links to its entry in the sources panel.
    expect(page.locator('.follow-up [data-live-text] a[data-citation="resolved"]').first).to_have_attribute(
        "href", f"#{model_server.requests[-1]['messages'][0]['content'].split('handle: ')[1].split()[0]}"
    )
    assert thread.messages.count() == 6
    assert watched.errors == []
