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
from tests.standins.hostile_model import hostile

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


@pytest.fixture
def hostile_server(reader: tuple[User, Any]) -> Iterator[ChatStandin]:
    """An answer model that writes past the answer cap (issue 22, defects 1 and 10)."""
    user = reader[0]
    binding_create(name="local", provider="local", tools=["knowledge_search"], users=[user])
    document_ingest(
        collection=collection_get_or_create(name="birds"),
        source_key="k",
        content_hash="k",
        title="Kingfisher note",
        source_url="",
        chunks=[ChunkDraft("Kingfishers dive for fish from a perch. They nest in banks.")],
    )
    with serve(hostile("fifty")) as server:
        model = AnswerModel(name="hostile", base_url=server.base_url, model="hostile-1", timeout=30)
        model.full_clean()
        model.save()
        model.users.add(user)
        yield server


def test_an_answer_past_the_cap_ends_in_the_browser_with_the_reason_and_the_thread(
    hostile_server: ChatStandin, open_page: OpenPage
) -> None:
    page, watched = open_page("/ask/")
    page.locator('[data-field="question"]').fill("kingfishers")
    page.locator('[data-field="composer"]').select_option("hostile")
    page.locator('[data-action="ask"]').click()

    status = page.locator("[data-live-status]")
    expect(status).to_contain_text("No answer was stored as complete")
    expect(status).to_contain_text("passed 40,000 characters")
    # Never more of the answer than the cap was shown.
    assert len(page.locator("[data-live-text]").inner_text()) <= 40_000
    page.locator("[data-live-thread]").click()
    expect(page.locator("body")).to_contain_text("passed 40,000 characters, the most an answer may hold")
    message = Message.objects.get(type="ai")
    assert message.status == "error"
    assert [m.type for m in Thread.objects.get().messages.order_by("seq")] == ["human", "tool", "ai"]
    assert watched.errors == []
