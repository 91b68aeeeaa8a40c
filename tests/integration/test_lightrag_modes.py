"""LightRAG query modes: the binding's rules, the admin form, the search's ``mode``, capabilities, OpenAPI.

Upstream answers are SYNTHETIC ``/query/data`` payloads shaped after docs/providers.md,
one per mode (``naive`` returns chunks only; graph modes return entities and
relationships too), served through the client factory's transport.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.providers.lightrag import QUERY_MODES
from knowledgeweb.threads.models import Message, Thread
from tests.synthetic import (
    LIGHTRAG_KEY,
    LIGHTRAG_URL,
    RAGFLOW_URL,
    Upstream,
    serving,
    synthetic_lightrag_chunk,
    synthetic_lightrag_entity,
    synthetic_lightrag_no_results,
    synthetic_lightrag_relationship,
    synthetic_lightrag_success,
)

pytestmark = pytest.mark.django_db
SEARCH = "/api/knowledge/search"
GRAPH_MODES = ("local", "global", "hybrid", "mix")
LIGHTRAG: dict[str, Any] = {
    "name": "lightrag-main",
    "provider": "lightrag",
    "base_url": LIGHTRAG_URL,
    "api_key_env": "KNOWLEDGEWEB_KEY_LIGHTRAG",
    "tools": ["knowledge_search", "entity_relations_search"],
}
CHUNK = synthetic_lightrag_chunk("doc-acme-chunk-000", "Synthetic: Alice founded Acme in 1999.")


def payload(mode: str) -> dict[str, Any]:
    """What LightRAG answers in ``mode``: naive has no graph; graph modes carry one edge and its chunk."""
    if mode == "naive":
        return synthetic_lightrag_success(chunks=[CHUNK], mode="naive")
    return synthetic_lightrag_success(
        chunks=[CHUNK],
        entities=[synthetic_lightrag_entity("Alice", "Founder of Acme.", CHUNK["chunk_id"])],
        relationships=[
            synthetic_lightrag_relationship("Alice", "Acme", "Alice founded Acme.", CHUNK["chunk_id"])
        ],
        mode=mode,
    )


def answer_in_kind(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json=payload(json.loads(request.content)["mode"]))


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch) -> Iterator[Upstream]:
    with serving(monkeypatch, lightrag=lambda request: answer_in_kind(request)) as recording:
        yield recording


def bind(user: User, **changes: Any) -> KnowledgeBinding:
    return binding_create(**{**LIGHTRAG, "users": [user], **changes})


def post(client: Client, **body: Any) -> Any:
    payload = {"tool": "knowledge_search", "query": "who founded acme?", "binding": "lightrag-main", **body}
    return client.post(SEARCH, payload, content_type="application/json")


def sent_modes(upstream: Upstream) -> list[str]:
    return [body["mode"] for body in upstream.bodies("/query/data")]


# --- the binding's rules -------------------------------------------------------------------


def refused(**fields: Any) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        binding_create(**{**LIGHTRAG, **fields})
    assert KnowledgeBinding.objects.count() == 0
    return caught.value.message_dict


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"query_modes": ["bypass"]}, "query_modes", "Unknown mode(s): bypass. Choose from naive, local, global, hybrid, mix (bypass retrieves nothing"),
        ({"query_modes": ["fast"]}, "query_modes", "Unknown mode(s): fast."),
        ({"query_modes": ["local", "local"]}, "query_modes", "A mode is listed twice."),
        ({"default_mode": "bypass"}, "default_mode", "Choose one of naive, local, global, hybrid, mix, or leave it empty"),
        ({"query_modes": ["local"], "default_mode": "global"}, "default_mode", "The default mode global must be one of the allowed query modes."),
        ({"default_mode": "naive"}, "default_mode", "naive retrieves no entities or relations, so it cannot be the default of a binding offering entity_relations_search"),
    ],
)  # fmt: skip
def test_each_invalid_mode_setting_gets_a_clear_error_and_nothing_is_saved(
    changes: dict[str, Any], field: str, message: str
) -> None:
    errors = refused(**changes)
    assert any(message in text for text in errors[field]), errors


@pytest.mark.parametrize(
    ("provider", "extra"),
    [
        ("ragflow", {"base_url": RAGFLOW_URL, "api_key_env": "KNOWLEDGEWEB_KEY_RAGFLOW"}),
        ("local", {"base_url": "", "api_key_env": ""}),
    ],
)
def test_other_providers_take_no_modes(provider: str, extra: dict[str, Any]) -> None:
    errors = refused(
        provider=provider, tools=["knowledge_search"], query_modes=["mix"], default_mode="mix", **extra
    )
    label = "RAGFlow" if provider == "ragflow" else "Local index (embedded)"
    assert errors["query_modes"] == [f"Query modes are LightRAG's; {label} has none, so leave them empty."]
    assert errors["default_mode"] == [f"Query modes are LightRAG's; {label} has none, so leave this empty."]


def test_modes_stored_in_another_shape_are_refused_at_use() -> None:
    from knowledgeweb.bindings.rules import binding_problems

    fields = {**LIGHTRAG, "agent_names": [], "top_k": 20, "timeout": 30, "scope": "all", "selection": []}
    assert binding_problems(**fields, query_modes="local")["query_modes"] == [
        "Query modes must be a list of mode names."
    ]
    assert binding_problems(**fields, default_mode=3)["default_mode"] == [
        "The default mode must be a mode name or empty."
    ]
    assert binding_problems(**fields, query_modes=None) == {}


def test_naive_may_be_the_default_of_a_documents_only_binding(user: User) -> None:
    binding = bind(user, tools=["knowledge_search"], query_modes=["naive", "mix"], default_mode="naive")
    assert (binding.query_modes, binding.default_mode) == (["naive", "mix"], "naive")


# --- searching in each mode ----------------------------------------------------------------


@pytest.mark.parametrize("mode", QUERY_MODES)
def test_a_document_search_runs_in_each_allowed_mode(
    mode: str, upstream: Upstream, user: User, api_client: Client, thread: Thread
) -> None:
    bind(user, query_modes=list(QUERY_MODES))
    response = post(api_client, mode=mode, thread_id=str(thread.id))
    assert response.status_code == 200, response.content
    assert sent_modes(upstream) == [mode]
    body = response.json()
    assert body["status"] == "success"
    # Document search shows chunks only, whatever the mode returned beside them.
    assert "Synthetic: Alice founded Acme in 1999." in body["content"]
    assert "Alice founded Acme." not in body["content"]
    assert len(body["artifact"]["knowledge_sources"]) == 1
    assert Message.objects.get().artifact == body["artifact"]


@pytest.mark.parametrize("mode", GRAPH_MODES)
def test_an_entity_relations_search_runs_in_each_graph_mode(
    mode: str, upstream: Upstream, user: User, api_client: Client
) -> None:
    bind(user, query_modes=list(GRAPH_MODES))
    response = post(api_client, tool="entity_relations_search", mode=mode)
    assert response.status_code == 200, response.content
    assert sent_modes(upstream) == [mode]
    content = response.json()["content"]
    assert "Alice founded Acme." in content
    assert "Synthetic: Alice founded Acme in 1999." in content


def test_naive_mode_finding_nothing_is_an_empty_success(
    monkeypatch: pytest.MonkeyPatch, user: User, api_client: Client
) -> None:
    nothing = {**synthetic_lightrag_no_results("naive"), "message": "No relevant document chunks found."}
    with serving(monkeypatch, lightrag=lambda request: httpx.Response(200, json=nothing)) as upstream:
        bind(user, query_modes=["naive"])
        response = post(api_client, mode="naive")
    assert response.status_code == 200
    assert response.json()["content"] == "Knowledge search results from lightrag: nothing found."
    assert sent_modes(upstream) == ["naive"]


def test_without_a_mode_documents_use_mix_and_relations_hybrid(
    upstream: Upstream, user: User, api_client: Client
) -> None:
    bind(user)
    assert post(api_client).status_code == 200
    assert post(api_client, tool="entity_relations_search").status_code == 200
    assert sent_modes(upstream) == ["mix", "hybrid"]


def test_the_bindings_default_mode_is_used_when_a_search_names_none(
    upstream: Upstream, user: User, api_client: Client
) -> None:
    bind(user, query_modes=["local", "global"], default_mode="global")
    assert post(api_client).status_code == 200
    assert post(api_client, tool="entity_relations_search").status_code == 200
    assert sent_modes(upstream) == ["global", "global"]


def test_the_default_mode_is_allowed_even_when_not_listed(
    upstream: Upstream, user: User, api_client: Client
) -> None:
    bind(user, query_modes=["local"])
    assert post(api_client, mode="mix").status_code == 200
    assert post(api_client, mode="local").status_code == 200
    assert sent_modes(upstream) == ["mix", "local"]


# --- refusals: a clear 422 and nothing sent or written --------------------------------------


def assert_refused(response: Any, upstream: Upstream, detail: str, code: str | None) -> None:
    assert response.status_code == 422, response.content
    body = response.json()
    assert detail in body["detail"]
    assert body.get("code") == code
    assert upstream.requests == []
    assert Message.objects.count() == 0


def test_a_mode_the_binding_does_not_list_is_422_with_nothing_sent(
    upstream: Upstream, user: User, api_client: Client, thread: Thread
) -> None:
    bind(user, query_modes=["local", "global"])
    assert_refused(
        post(api_client, mode="naive", thread_id=str(thread.id)),
        upstream,
        "binding 'lightrag-main' does not allow the mode 'naive' for knowledge_search; choose one of: "
        "local, global, mix. Nothing was sent.",
        "mode_not_allowed",
    )


def test_naive_entity_relations_is_422_with_nothing_sent(
    upstream: Upstream, user: User, api_client: Client
) -> None:
    bind(user, tools=["knowledge_search", "entity_relations_search"], query_modes=list(QUERY_MODES))
    assert_refused(
        post(api_client, tool="entity_relations_search", mode="naive"),
        upstream,
        "entity_relations_search cannot run in mode 'naive' (it retrieves no entities or relations); "
        "choose one of: local, global, hybrid, mix.",
        "mode_not_allowed",
    )


@pytest.mark.parametrize("mode", ["bypass", "fast", "", "MIX"])
def test_a_mode_that_is_not_a_retrieval_mode_fails_the_schema_with_nothing_sent(
    mode: str, upstream: Upstream, user: User, api_client: Client
) -> None:
    bind(user, query_modes=list(QUERY_MODES))
    response = post(api_client, mode=mode)
    assert_refused(
        response,
        upstream,
        "Invalid request: body.mode: Input should be 'naive', 'local', 'global', 'hybrid' or 'mix'",
        "invalid_request",
    )


def test_a_mode_for_a_ragflow_binding_is_422_with_nothing_sent(
    upstream: Upstream, user: User, api_client: Client
) -> None:
    binding_create(
        name="ragflow-main", provider="ragflow", base_url=RAGFLOW_URL, api_key_env="KNOWLEDGEWEB_KEY_RAGFLOW",
        tools=["knowledge_search"], users=[user],
    )  # fmt: skip
    assert_refused(
        post(api_client, binding="ragflow-main", mode="mix"),
        upstream,
        "Query modes are LightRAG's; RAGFlow binding 'ragflow-main' takes none, so leave 'mode' out.",
        "mode_not_supported",
    )


# --- capabilities, admin, OpenAPI ----------------------------------------------------------


def test_capabilities_list_each_tools_modes_and_default(
    upstream: Upstream, user: User, api_client: Client
) -> None:
    bind(user, query_modes=["naive", "local", "mix"], default_mode="local")
    tools = api_client.get("/api/knowledge/capabilities").json()["tools"]
    assert [(t["tool"], t["query_modes"], t["default_mode"]) for t in tools] == [
        ("knowledge_search", ["naive", "local", "mix"], "local"),
        # naive serves no relations, so it is not offered for them.
        ("entity_relations_search", ["local", "mix"], "local"),
    ]
    assert upstream.requests == []
    assert LIGHTRAG_KEY not in json.dumps(tools)


def test_the_admin_form_saves_modes_and_shows_a_clear_error(
    user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_LIGHTRAG", "synthetic-lightrag-key")  # else the admin asks first
    admin = User.objects.create_superuser("admin", "admin@example.test", "admin-password-1")
    client = Client()
    client.force_login(admin)
    form = {
        "name": "lightrag-main", "provider": "lightrag", "enabled": "on", "base_url": LIGHTRAG_URL,
        "api_key_env": "KNOWLEDGEWEB_KEY_LIGHTRAG", "agent_names": "", "tools": ["knowledge_search"],
        "top_k": "20", "timeout": "30", "scope": "all", "selection": "", "users": [user.pk],
    }  # fmt: skip
    page = client.get("/admin/bindings/knowledgebinding/add/").content.decode()
    assert 'name="query_modes" value="naive"' in page
    assert 'value="bypass"' not in page
    refused_page = client.post(
        "/admin/bindings/knowledgebinding/add/", {**form, "query_modes": ["local"], "default_mode": "global"}
    )
    assert refused_page.status_code == 200
    assert "The default mode global must be one of the allowed query modes." in refused_page.content.decode()
    assert KnowledgeBinding.objects.count() == 0
    saved = client.post(
        "/admin/bindings/knowledgebinding/add/",
        {**form, "query_modes": ["local", "naive"], "default_mode": "naive"},
    )
    assert saved.status_code == 302, saved.content.decode()[:2000]
    binding = KnowledgeBinding.objects.get()
    assert (binding.query_modes, binding.default_mode) == (["naive", "local"], "naive")


def test_openapi_documents_the_mode_and_the_capabilities(api_client: Client) -> None:
    schema = api_client.get("/api/openapi.json").json()
    text = json.dumps(schema)
    assert '"enum": ["naive", "local", "global", "hybrid", "mix"]' in text
    capability = schema["components"]["schemas"]["CapabilityOut"]["properties"]
    assert {"query_modes", "default_mode"} <= set(capability)
