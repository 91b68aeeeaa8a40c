"""Per-collection access to the local index: a local binding serves all collections or a selection.

Two users, two collections: each user's searches (service and API) reach only the
collections their bindings serve, and ``collections_for_user`` says the same.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.library.models import Collection
from knowledgeweb.library.selectors import collections_for_user
from knowledgeweb.retrieval import retrieval_search
from tests.factories import BindingFactory, CollectionFactory, TokenFactory

pytestmark = pytest.mark.django_db

ADD_URL = "/admin/bindings/knowledgebinding/add/"


@pytest.fixture
def hr() -> Collection:
    return CollectionFactory.create(
        name="hr", documents={"Salaries": "Quarterly salary bands for every engineer."}
    )


@pytest.fixture
def public() -> Collection:
    return CollectionFactory.create(
        name="public", documents={"Handbook": "The engineer handbook explains onboarding."}
    )


def local(name: str, user: User, *collections: Collection, **extra: Any) -> KnowledgeBinding:
    """A local binding for ``user``: every collection, or the ``collections`` given."""
    return BindingFactory.create(name=name, users=[user], collections=collections, **extra)


def titles(user: User) -> set[str]:
    outcome = retrieval_search(user=user, tool="knowledge_search", query="engineer")
    assert outcome.artifact is not None
    return {source["title"] for source in outcome.artifact["knowledge_sources"]}


def test_each_user_searches_only_the_collections_their_binding_selects(
    user: User, other_user: User, hr: Collection, public: Collection
) -> None:
    local("alice-hr", user, hr)
    local("bob-public", other_user, public)
    assert titles(user) == {"Salaries"}
    assert titles(other_user) == {"Handbook"}
    assert collections_for_user(user) == {hr.pk}
    assert collections_for_user(other_user) == {public.pk}


def test_the_scope_all_serves_every_collection(
    user: User, other_user: User, hr: Collection, public: Collection
) -> None:
    local("alice-all", user)
    local("bob-public", other_user, public)
    assert titles(user) == {"Salaries", "Handbook"}
    assert collections_for_user(user) == {hr.pk, public.pk}
    assert titles(other_user) == {"Handbook"}


def test_the_api_search_reaches_only_the_selected_collection(
    user: User, other_user: User, hr: Collection, public: Collection
) -> None:
    local("alice-hr", user, hr)
    local("bob-public", other_user, public)
    for owner, expected in ((user, "Salaries"), (other_user, "Handbook")):
        response = (
            TokenFactory.create(user=owner)
            .client()
            .post(
                "/api/knowledge/search",
                {"tool": "knowledge_search", "query": "engineer"},
                content_type="application/json",
            )
        )
        assert response.status_code == 200, response.content
        found = {s["title"] for s in response.json()["artifact"]["knowledge_sources"]}
        assert found == {expected}


def test_a_user_without_a_usable_local_binding_may_read_no_collection(
    user: User, other_user: User, hr: Collection, public: Collection
) -> None:
    local("off", user, enabled=False)
    local("scope-off", user, scope="disabled")
    assert collections_for_user(user) == set()
    assert collections_for_user(other_user) == set()


def test_a_binding_broken_in_the_database_serves_nothing(user: User, hr: Collection) -> None:
    binding = local("alice-hr", user, hr)
    KnowledgeBinding.objects.filter(pk=binding.pk).update(selection=[{"dataset_id": "hr"}])
    assert collections_for_user(user) == set()


def test_a_renamed_collection_stays_selected_and_a_deleted_one_is_not_searched(
    user: User, hr: Collection, public: Collection
) -> None:
    local("alice-hr", user, hr)
    Collection.objects.filter(pk=hr.pk).update(name="people")
    assert titles(user) == {"Salaries"}
    Collection.objects.filter(pk=hr.pk).delete()
    # A new collection under the old name is not opened to the old selection.
    CollectionFactory.create(name="hr", documents={"New salaries": "Salary bands for an engineer."})
    assert titles(user) == set()
    assert collections_for_user(user) == set()


@pytest.mark.parametrize(
    ("selection", "message"),
    [
        ([], "Select at least one collection."),
        ([{"dataset_id": "hr", "document_ids": []}], "'hr' is not a collection id."),
        ([{"dataset_id": "1", "document_ids": ["7"]}], "selects whole collections, not single documents"),
        ([{"dataset_id": "1"}, {"dataset_id": "1"}], "Collection 1 is selected more than once."),
    ],
)
def test_the_rules_refuse_a_malformed_local_selection(selection: list[Any], message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        binding_create(
            name="l", provider="local", tools=["knowledge_search"], scope="selected", selection=selection
        )
    assert any(message in text for text in caught.value.message_dict["selection"])
    assert KnowledgeBinding.objects.count() == 0


@pytest.fixture
def admin_client(db: None) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("admin", "admin@example.test", "admin-password-1"))
    return client


def local_form(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "local-hr",
        "provider": "local",
        "enabled": "on",
        "tools": ["knowledge_search"],
        "top_k": "20",
        "timeout": "30",
        "scope": "selected",
    }
    data.update(changes)
    return data


def test_the_admin_offers_the_existing_collections_and_saves_the_ones_ticked(
    admin_client: Client, user: User, hr: Collection, public: Collection
) -> None:
    page = admin_client.get(ADD_URL).content.decode()
    assert 'name="collections"' in page
    assert ">hr</label>" in page or " hr</label>" in page
    assert " public</label>" in page or ">public</label>" in page
    response = admin_client.post(ADD_URL, local_form(users=[user.pk], collections=[hr.pk]))
    assert response.status_code == 302, response.content.decode()[:3000]
    binding = KnowledgeBinding.objects.get()
    assert binding.selection == [{"dataset_id": str(hr.pk), "document_ids": []}]
    assert collections_for_user(user) == {hr.pk}
    change = admin_client.get(f"/admin/bindings/knowledgebinding/{binding.pk}/change/").content.decode()
    boxes = re.findall(r'<input type="checkbox" name="collections"[^>]*>', change)
    assert [("checked" in box, f'value="{hr.pk}"' in box) for box in boxes] == [(True, True), (False, False)]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({}, "Select at least one collection."),
        # RAGFlow's lines do not apply to a local binding: ignored, so what is missing is said.
        ({"selection": "dsA"}, "Select at least one collection."),
        ({"scope": "all", "collections": "HR"}, "Collections are used only with the scope"),
    ],
)
def test_the_admin_refuses_a_local_selection_it_cannot_use(
    admin_client: Client, hr: Collection, changes: dict[str, Any], message: str
) -> None:
    if changes.get("collections") == "HR":
        changes = {**changes, "collections": [hr.pk]}
    response = admin_client.post(ADD_URL, local_form(**changes))
    assert response.status_code == 200
    page = response.content.decode()
    assert message.replace("'", "&#x27;") in page
    assert KnowledgeBinding.objects.count() == 0


def test_the_admin_ignores_collections_on_a_ragflow_binding(
    admin_client: Client, user: User, hr: Collection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_RAGFLOW", "synthetic-ragflow-key")  # else the admin asks first
    response = admin_client.post(
        ADD_URL,
        local_form(
            provider="ragflow",
            base_url="https://ragflow.example.test",
            api_key_env="KNOWLEDGEWEB_KEY_RAGFLOW",
            users=[user.pk],
            selection="dsA",
            collections=[hr.pk],
        ),
    )
    # Collections are the local index's field: hidden for RAGFlow, and ignored if sent.
    assert response.status_code == 302, response.content.decode()[:3000]
    assert KnowledgeBinding.objects.get().selection == [{"dataset_id": "dsA", "document_ids": []}]
