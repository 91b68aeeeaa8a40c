"""The factories make rows the app's own services accept and find: a bound user searches the
ingested corpus, a token authenticates, and a thread's recorded searches are its evidence."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from knowledgeweb.accounts.services import token_authenticate
from knowledgeweb.knowledge import RetrievalHit
from knowledgeweb.library.models import Chunk
from knowledgeweb.library.selectors import collections_for_user
from knowledgeweb.library.services import ChunkDraft
from knowledgeweb.retrieval import retrieval_search
from knowledgeweb.threads.models import Message
from tests.factories import (
    BindingFactory,
    CollectionFactory,
    ThreadFactory,
    TokenFactory,
    UserFactory,
    logged_in,
)

pytestmark = pytest.mark.django_db


def test_a_user_bound_to_a_selected_collection_searches_only_its_ingested_corpus() -> None:
    user = UserFactory.create()
    hr = CollectionFactory.create(
        name="hr", documents={"Salaries": ["Salary bands.", ChunkDraft("Page two.", page=2)]}
    )
    CollectionFactory.create(name="public", documents={"Handbook": "The handbook on salary reviews."})
    binding = BindingFactory.create(users=[user], collections=[hr])

    assert (binding.provider, binding.scope, list(binding.tools)) == (
        "local",
        "selected",
        ["knowledge_search"],
    )
    assert collections_for_user(user) == {hr.pk}
    assert list(
        Chunk.objects.filter(document__collection=hr).values_list("text", "page").order_by("ordinal")
    ) == [
        ("Salary bands.", None),
        ("Page two.", 2),
    ]
    outcome = retrieval_search(user=user, tool="knowledge_search", query="salary")
    assert outcome.artifact is not None
    assert [source["title"] for source in outcome.artifact["knowledge_sources"]] == ["Salaries"]


def test_users_can_sign_in_and_tokens_authenticate_their_user() -> None:
    user = UserFactory.create(username="carol")
    assert user.check_password("carol-password-1")
    assert logged_in(user).get("/").status_code == 200
    issued = TokenFactory.create(user=user)
    assert token_authenticate(raw_token=issued.raw) == user
    assert issued.client().get("/api/threads").status_code == 200
    assert User.objects.count() == 1


def test_a_thread_records_each_search_as_trusted_evidence_in_order() -> None:
    thread = ThreadFactory.create(
        searches=[
            [RetrievalHit(text="Owls hunt at night.", title="owls.md")],
            [
                RetrievalHit(text="Herons wade.", title="herons.md"),
                RetrievalHit(text="Egrets too.", title="e.md"),
            ],
        ]
    )
    sources = [
        message.artifact["knowledge_sources"] if message.artifact else []
        for message in Message.objects.filter(thread=thread, type="tool").order_by("seq")
    ]
    assert [[source["title"] for source in found] for found in sources] == [
        ["owls.md"],
        ["herons.md", "e.md"],
    ]
