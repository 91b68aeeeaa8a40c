"""Binding validation on save: one clear error per invalid combination, nothing saved."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.rules import binding_problems
from knowledgeweb.bindings.selectors import binding_credential_is_set, binding_list_for_user
from knowledgeweb.bindings.services import binding_create

pytestmark = pytest.mark.django_db

RAGFLOW: dict[str, Any] = {
    "name": "ragflow-main",
    "provider": "ragflow",
    "base_url": "https://ragflow.example.test",
    "api_key_env": "KNOWLEDGEWEB_KEY_RAGFLOW",
    "tools": ["knowledge_search"],
}
LIGHTRAG: dict[str, Any] = {
    "name": "lightrag-main",
    "provider": "lightrag",
    "base_url": "http://lightrag.example.test:9621",
    "api_key_env": "KNOWLEDGEWEB_KEY_LIGHTRAG",
    "tools": ["knowledge_search", "entity_relations_search"],
}
LOCAL: dict[str, Any] = {"name": "local", "provider": "local", "tools": ["knowledge_search"]}


def refused(**fields: Any) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        binding_create(**fields)
    assert KnowledgeBinding.objects.count() == 0
    return caught.value.message_dict


def test_valid_bindings_of_each_provider_are_saved_with_the_documented_defaults(user: User) -> None:
    ragflow = binding_create(**RAGFLOW, users=[user])
    binding_create(**LIGHTRAG)
    binding_create(**LOCAL)
    assert (ragflow.top_k, ragflow.timeout, ragflow.scope, ragflow.enabled) == (20, 30, "all", True)
    assert list(ragflow.users.all()) == [user]
    assert KnowledgeBinding.objects.count() == 3


def test_a_ragflow_selection_of_datasets_and_documents_is_saved() -> None:
    selection = [
        {"dataset_id": "dsA", "document_ids": []},
        {"dataset_id": "dsB", "document_ids": [f"d{i}" for i in range(1000)]},
    ]
    binding = binding_create(**RAGFLOW, scope="selected", selection=selection)
    assert binding.selection == selection


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"base_url": ""}, "base_url", "RAGFlow needs a base URL"),
        ({"base_url": "ftp://ragflow.example.test"}, "base_url", "valid http:// or https:// URL"),
        ({"base_url": "ragflow.example.test"}, "base_url", "valid http:// or https:// URL"),
        (
            {"base_url": "https://user:pw@ragflow.example.test"},
            "base_url",
            "Do not put credentials in the URL",
        ),
        ({"base_url": "https://ragflow.example.test/?k=1"}, "base_url", "must not have a query string"),
        ({"base_url": "https://ragflow.example.test:99999"}, "base_url", "valid http:// or https:// URL"),
        ({"api_key_env": ""}, "api_key_env", "needs the name of the environment variable"),
        ({"api_key_env": "ragflow-abc123"}, "api_key_env", "not the key itself"),
        ({"api_key_env": "MY KEY"}, "api_key_env", "NAME of an environment variable"),
        ({"tools": []}, "tools", "Enable at least one tool"),
        ({"tools": ["web_search"]}, "tools", "Unknown tool(s): web_search"),
        ({"tools": ["entity_relations_search"]}, "tools", "offered only by LightRAG, not by RAGFlow"),
        ({"tools": ["knowledge_search", "knowledge_search"]}, "tools", "listed twice"),
        ({"top_k": 0}, "top_k", "from 1 to 100"),
        ({"top_k": 101}, "top_k", "from 1 to 100"),
        ({"timeout": 0}, "timeout", "from 1 to 60 seconds"),
        ({"timeout": 61}, "timeout", "KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING allows at most 60"),
        ({"agent_names": [" lead"]}, "agent_names", "surrounding spaces"),
        ({"agent_names": ["lead", "lead"]}, "agent_names", "listed twice"),
        ({"agent_names": ["x" * 101]}, "agent_names", "longer than 100"),
        ({"scope": "selected"}, "selection", "Select at least one dataset"),
        (
            {"selection": [{"dataset_id": "dsA", "document_ids": []}]},
            "selection",
            "only with the scope 'selected'",
        ),
        ({"name": "has space"}, "name", "letters, digits"),
    ],
)
def test_each_invalid_ragflow_field_gets_a_clear_error(
    changes: dict[str, Any], field: str, message: str
) -> None:
    errors = refused(**{**RAGFLOW, **changes})
    assert any(message in text for text in errors[field]), errors


def test_1001_selected_documents_are_refused() -> None:
    selection = [{"dataset_id": "dsA", "document_ids": [f"d{i}" for i in range(1001)]}]
    errors = refused(**RAGFLOW, scope="selected", selection=selection)
    assert errors["selection"] == ["1001 documents are selected; at most 1000 documents may be selected."]


def test_a_lightrag_binding_accepts_only_all_or_disabled() -> None:
    errors = refused(**LIGHTRAG, scope="selected", selection=[{"dataset_id": "dsA", "document_ids": []}])
    assert errors["scope"] == [
        "LightRAG accepts only the scopes 'all' and 'disabled'; selection is for RAGFlow datasets and documents "
        "and for local collections."
    ]
    binding_create(**LIGHTRAG, scope="disabled")


def test_a_local_binding_needs_and_takes_no_url_or_credential() -> None:
    errors = refused(**LOCAL, base_url="https://x.example.test", api_key_env="X")
    assert errors["base_url"] == ["The local index is built in; leave the base URL empty."]
    assert errors["api_key_env"] == ["The local index needs no credential; leave this empty."]


def test_a_duplicate_name_is_refused() -> None:
    binding_create(**RAGFLOW)
    with pytest.raises(ValidationError) as caught:
        binding_create(**RAGFLOW)
    assert "name" in caught.value.message_dict
    assert KnowledgeBinding.objects.count() == 1


def test_the_rules_catch_shapes_only_a_direct_database_edit_could_make() -> None:
    problems = binding_problems(
        name="x",
        provider="weaviate",
        base_url="",
        api_key_env="",
        agent_names="lead",
        tools="knowledge_search",
        top_k=True,
        timeout="30",
        scope="everything",
        selection={"dsA": []},
    )
    assert set(problems) == {"provider", "agent_names", "tools", "top_k", "timeout", "scope"}


def test_a_malformed_stored_selection_is_a_clear_error() -> None:
    problems = binding_problems(
        **{**RAGFLOW, "agent_names": [], "top_k": 20, "timeout": 30},
        scope="selected",
        selection=[{"dataset": "x"}],
    )
    assert problems == {
        "selection": ['Each selected dataset must be {"dataset_id": ..., "document_ids": [...]}.']
    }


def test_only_enabled_bindings_naming_the_user_are_listed(user: User, other_user: User) -> None:
    mine = binding_create(**RAGFLOW, users=[user])
    binding_create(**LIGHTRAG, users=[user], enabled=False)
    binding_create(**LOCAL, users=[other_user])
    binding_create(name="nobody", provider="local", tools=["knowledge_search"])
    assert list(binding_list_for_user(user=user)) == [mine]


def test_the_credential_check_reports_presence_only(monkeypatch: pytest.MonkeyPatch) -> None:
    binding = binding_create(**RAGFLOW)
    monkeypatch.delenv("KNOWLEDGEWEB_KEY_RAGFLOW", raising=False)
    assert binding_credential_is_set(binding=binding) is False
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_RAGFLOW", "ragflow-synthetic")
    assert binding_credential_is_set(binding=binding) is True
