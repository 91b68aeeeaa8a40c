"""The binding admin: list fields as lines, clear errors on save, never a credential on the page."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.services import binding_create

pytestmark = pytest.mark.django_db

ADD_URL = "/admin/bindings/knowledgebinding/add/"
SECRET = "ragflow-SyntheticAdminKey42"


@pytest.fixture
def admin_client(db: None) -> Client:
    admin = User.objects.create_superuser("admin", "admin@example.test", "admin-password-1")
    client = Client()
    client.force_login(admin)
    return client


def form(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "ragflow-main",
        "provider": "ragflow",
        "enabled": "on",
        "base_url": "https://ragflow.example.test",
        "api_key_env": "KNOWLEDGEWEB_KEY_RAGFLOW",
        "agent_names": "lead_agent\n\n researcher \n",
        "tools": ["knowledge_search"],
        "top_k": "20",
        "timeout": "30",
        "scope": "all",
        "selection": "",
    }
    data.update(changes)
    return data


def test_the_admin_saves_agent_names_and_a_selection_written_one_per_line(
    admin_client: Client, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_RAGFLOW", SECRET)  # else the admin asks first
    response = admin_client.post(
        ADD_URL,
        form(users=[user.pk], scope="selected", selection="dsA\ndsB/doc1\ndsB/doc2\n"),
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    binding = KnowledgeBinding.objects.get()
    assert binding.agent_names == ["lead_agent", "researcher"]
    assert binding.selection == [
        {"dataset_id": "dsA", "document_ids": []},
        {"dataset_id": "dsB", "document_ids": ["doc1", "doc2"]},
    ]
    assert list(binding.users.all()) == [user]


def test_the_change_page_shows_the_lists_as_lines(admin_client: Client) -> None:
    binding = binding_create(
        name="r",
        provider="ragflow",
        base_url="https://ragflow.example.test",
        api_key_env="KNOWLEDGEWEB_KEY_RAGFLOW",
        tools=["knowledge_search"],
        agent_names=["lead", "helper"],
        scope="selected",
        selection=[{"dataset_id": "dsB", "document_ids": ["doc1", "doc2"]}],
    )
    page = admin_client.get(f"/admin/bindings/knowledgebinding/{binding.pk}/change/").content.decode()
    assert "lead\nhelper</textarea>" in page
    assert "dsB/doc1\ndsB/doc2</textarea>" in page


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"provider": "lightrag", "tools": ["knowledge_search"], "scope": "selected", "selection": "dsA"},
         "LightRAG accepts only the scopes &#x27;all&#x27; and &#x27;disabled&#x27;"),
        ({"tools": ["entity_relations_search"]}, "entity_relations_search is offered only by LightRAG"),
        ({"api_key_env": SECRET}, "not the key itself"),
        ({"base_url": ""}, "RAGFlow needs a base URL"),
        ({"top_k": "500"}, "Enter a whole number from 1 to 100 results."),
        ({"scope": "selected", "selection": "dsA\ndsA/doc1"}, "listed both whole and with documents"),
        ({"scope": "selected", "selection": "dsA/"}, "names no document after"),
        ({"scope": "selected", "selection": "\n".join(f"dsA/d{i}" for i in range(1001))},
         "1001 documents are selected; at most 1000"),
        ({"tools": []}, "Enable at least one tool."),
    ],
)  # fmt: skip
def test_the_admin_shows_a_clear_error_and_saves_nothing(
    admin_client: Client, changes: dict[str, Any], message: str
) -> None:
    response = admin_client.post(ADD_URL, form(**changes))
    assert response.status_code == 200
    page = response.content.decode()
    assert message in page
    assert "errorlist" in page
    assert KnowledgeBinding.objects.count() == 0


def test_the_list_says_whether_the_credential_is_set_but_never_shows_it(
    admin_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    binding_create(
        name="r",
        provider="ragflow",
        base_url="https://ragflow.example.test",
        api_key_env="KNOWLEDGEWEB_KEY_RAGFLOW",
        tools=["knowledge_search"],
    )
    monkeypatch.delenv("KNOWLEDGEWEB_KEY_RAGFLOW", raising=False)
    assert (
        "KNOWLEDGEWEB_KEY_RAGFLOW is not set"
        in admin_client.get("/admin/bindings/knowledgebinding/").content.decode()
    )
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_RAGFLOW", SECRET)
    listing = admin_client.get("/admin/bindings/knowledgebinding/").content.decode()
    change = admin_client.get(f"/admin/bindings/knowledgebinding/{KnowledgeBinding.objects.get().pk}/change/")
    assert SECRET not in listing
    assert SECRET not in change.content.decode()
    assert ">set<" in listing
