"""Follow-ups in place (issue 24 item 7): the question appears as the next turn at once, the
answer streams into the conversation, and the page ends equal to a fresh load of the thread."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from knowledgeweb.bindings.services import binding_create
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.services import message_append, thread_create
from tests.e2e.watching import Watched
from tests.standins.chat_server import ChatStandin, Reply, citing_model, serve

pytestmark = pytest.mark.e2e

OpenPage = Callable[..., tuple[Page, Watched]]


def _birds(user: User) -> None:
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


def _model(user: User, base_url: str) -> None:
    model = AnswerModel(name="standin", base_url=base_url, model="standin-1", timeout=30)
    model.full_clean()
    model.save()
    model.users.add(user)


@pytest.fixture
def paused_model(reader: tuple[User, Any]) -> Iterator[ChatStandin]:
    _birds(reader[0])

    def paused(body: dict[str, Any]) -> Reply:
        reply = citing_model(body)
        reply.pause_after = len(reply.text.split(". ")[0].split()) + 2
        return reply

    with serve(paused) as server:
        _model(reader[0], server.base_url)
        yield server


@pytest.fixture
def failing_model(reader: tuple[User, Any]) -> Iterator[ChatStandin]:
    _birds(reader[0])
    with serve(lambda body: Reply(status=500, error_message="the model is down")) as server:
        _model(reader[0], server.base_url)
        yield server


def _thread(user: User) -> Thread:
    thread = thread_create(owner=user, title="Kingfishers")
    message_append(thread=thread, type="human", content="Do kingfishers fish?")
    message_append(thread=thread, type="ai", content="I believe so.")
    return thread


def _page_state(page: Page) -> dict[str, str]:
    return page.evaluate(
        """() => ({
            messages: document.querySelector("[data-messages]").innerHTML,
            header: document.querySelector(".thread-header").innerHTML,
            panel: document.querySelector("[data-sources-panel]").innerHTML,
        })"""
    )


def test_a_follow_up_streams_into_the_conversation_and_the_page_ends_as_a_fresh_load(
    paused_model: ChatStandin, open_page: OpenPage, reader: tuple[User, Any]
) -> None:
    thread = _thread(reader[0])
    page, watched = open_page(f"/threads/{thread.id}/")
    expect(page.locator("[data-citation-tally]")).to_contain_text("1 answer without citations")
    form = page.locator('[data-form="follow-up"]')
    form.locator('[data-field="question"]').fill("where do they nest?")
    form.locator('[data-field="composer"]').select_option("standin")
    form.locator('[data-action="follow-up"]').click()

    # At once: the question is the next turn and the answer streams below it, focused.
    messages = page.locator("[data-messages] > li")
    expect(messages.nth(-2)).to_contain_text("where do they nest?")
    live = messages.nth(-1)
    expect(live).to_be_focused()
    expect(live.locator("[data-live-text]")).to_contain_text("Kingfishers dive for fish from a perch")
    expect(live.locator('[data-live-text] [data-citation="resolved"]').first).to_have_text("[1]")

    paused_model.release.set()
    expect(page.locator("[data-follow-up-status]")).to_contain_text("Answer stored")
    # The stored render replaced the streamed one; header, tallies and sources are current.
    expect(page.locator("[data-live-answer]")).to_be_hidden()
    expect(page.locator("[data-messages] [data-live-answer]")).to_have_count(0)
    expect(page.locator("[data-messages] a.citation[data-citation='resolved']")).to_have_count(2)
    expect(page.locator("[data-citation-tally]")).to_contain_text("2 source found")
    expect(form.locator('[data-field="question"]')).to_have_value("")
    last = page.locator('[data-messages] [data-message-type="ai"]').last
    expect(last).to_be_focused()
    page.evaluate("() => document.activeElement.blur()")
    after = _page_state(page)
    fresh, _ = open_page(f"/threads/{thread.id}/")
    assert _page_state(fresh) == after
    # The chosen answer model is remembered (in this browser), for the next question.
    page.reload()
    expect(page.locator('[data-form="follow-up"] [data-field="composer"]')).to_have_value("standin")
    # The walk follows the new page.
    fresh.locator('[data-issue-walk] [data-walk="next"]').click()
    expect(fresh.locator("[data-walk-position]")).to_have_text("1 of 1")
    assert watched.errors == []


def test_a_failed_follow_up_is_an_alert_that_says_what_to_do(
    failing_model: ChatStandin, open_page: OpenPage, reader: tuple[User, Any]
) -> None:
    thread = _thread(reader[0])
    page, watched = open_page(f"/threads/{thread.id}/")
    form = page.locator('[data-form="follow-up"]')
    form.locator('[data-field="question"]').fill("where do they nest?")
    form.locator('[data-field="composer"]').select_option("standin")
    form.locator('[data-action="follow-up"]').click()
    alert = page.get_by_role("alert")
    expect(alert).to_be_visible()
    expect(alert).to_contain_text(re.compile("try again, or choose another answer model", re.I))
    expect(page.locator("[data-messages] [data-pending]")).to_have_count(0)
    assert [e for e in watched.errors if "Failed to load resource" not in e] == []
