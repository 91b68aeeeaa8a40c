"""One way to ask, one limit on questions (issue 23, "One way to ask").

Every entry point asks through the one turn service, which counts each question
against ``RATE_LIMIT_ASK``: past it, each answers 429 with ``Retry-After``, asks no
provider and no model, and writes nothing. Before, the extractive Ask page was never
throttled and Ask with a model and no JavaScript answered a rate limit with 400.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.bindings.services import binding_create
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.demo.services import DEMO_THREADS, demo_run
from knowledgeweb.library.provider import LocalProvider
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest
from knowledgeweb.threads.models import Message, Thread
from tests.standins.chat_server import ChatStandin, citing_model, serve

Ask = Callable[[Client, Client, str], Any]
FORM = {"question": "kingfishers", "binding": "local"}


@pytest.fixture
def asker(user: User) -> User:
    binding_create(name="local", provider="local", tools=["knowledge_search"], users=[user])
    document_ingest(
        collection=collection_get_or_create(name="birds"),
        source_key="k",
        content_hash="k",
        title="Kingfisher note",
        source_url="",
        chunks=[ChunkDraft("Kingfishers dive for fish from a perch. They nest in river banks.")],
    )
    return user


@pytest.fixture
def model(asker: User) -> Any:
    with serve(citing_model) as server:
        answer_model = AnswerModel(name="m", base_url=server.base_url, model="standin-1", timeout=5)
        answer_model.full_clean()
        answer_model.save()
        answer_model.users.add(asker)
        yield server


def _streamed(response: Any) -> Any:
    if response.status_code == 200:
        b"".join(response.streaming_content)  # the turn runs as the stream is read
    return response


ENTRY_POINTS: dict[str, Ask] = {
    "ask page, quoted sentences, no JavaScript": lambda web, api, thread: web.post("/ask/", FORM),
    "ask page, answer model, no JavaScript": lambda web, api, thread: web.post(
        "/ask/", {**FORM, "composer": "m"}
    ),
    "ask page, streamed": lambda web, api, thread: _streamed(
        web.post("/ask/stream/", {**FORM, "composer": "m"})
    ),
    "follow-up, no JavaScript": lambda web, api, thread: web.post(
        f"/threads/{thread}/ask/", {**FORM, "composer": "m"}
    ),
    "follow-up, streamed": lambda web, api, thread: _streamed(
        web.post(f"/threads/{thread}/ask/stream/", {**FORM, "composer": "m"})
    ),
    "api": lambda web, api, thread: api.post(
        f"/api/threads/{thread}/ask", {**FORM, "answer_model": "m"}, content_type="application/json"
    ),
}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_every_entry_point_answers_429_past_the_limit_and_runs_nothing(
    entry: str,
    asker: User,
    model: ChatStandin,
    api_client: Client,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "ask": (1, 60)}
    web = Client()
    web.force_login(asker)
    thread = Thread.objects.create(owner=asker, title="Birds")
    searches: list[str] = []
    real_search = LocalProvider.search

    def counted(self: LocalProvider, query: str, **kwargs: Any) -> Any:
        searches.append(query)
        return real_search(self, query, **kwargs)

    monkeypatch.setattr(LocalProvider, "search", counted)
    ask = ENTRY_POINTS[entry]

    first = ask(web, api_client, str(thread.id))
    assert first.status_code in {200, 302}
    before = (Thread.objects.count(), Message.objects.count(), len(searches), len(model.requests))
    second = ask(web, api_client, str(thread.id))

    assert second.status_code == 429
    assert int(second["Retry-After"]) >= 1
    said = second.json()["detail" if entry == "api" else "error"] if "json" in second["Content-Type"] else ""
    said = said or html.unescape(second.content.decode())
    assert "Too many questions: try again in" in said
    # Nothing ran: no search, no model call, nothing written.
    assert (Thread.objects.count(), Message.objects.count(), len(searches), len(model.requests)) == before


def test_the_limit_is_counted_per_user_across_entry_points(
    asker: User, model: ChatStandin, settings: Any
) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "ask": (2, 60)}
    web = Client()
    web.force_login(asker)

    assert web.post("/ask/", FORM).status_code == 302
    assert _streamed(web.post("/ask/stream/", {**FORM, "composer": "m"})).status_code == 200
    refused = web.post("/ask/", {**FORM, "composer": "m"})

    assert refused.status_code == 429
    assert Thread.objects.count() == 2


def test_the_demo_is_run_by_the_operator_and_counts_against_no_limit(db: None, settings: Any) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "ask": (1, 60)}

    result = demo_run()

    assert len(result.created) == len(DEMO_THREADS)
