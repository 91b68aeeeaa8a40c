"""POST /api/knowledge/search and GET /api/knowledge/capabilities through the real URL stack."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.accounts.services import token_create
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.providers.client import transport_override
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import thread_create
from tests.synthetic import (
    LIGHTRAG_KEY,
    LIGHTRAG_URL,
    RAGFLOW_KEY,
    RAGFLOW_URL,
    Upstream,
    by_host,
    lightrag_routes,
    ragflow_routes,
    synthetic_lightrag_chunk,
    synthetic_lightrag_success,
)

pytestmark = pytest.mark.django_db
SEARCH = "/api/knowledge/search"


class Server:
    """The synthetic upstream; ``lightrag`` can be swapped per test."""

    def __init__(self) -> None:
        chunk = synthetic_lightrag_chunk("doc-aaa-chunk-000", "Synthetic: Alice founded Acme.")
        self.lightrag: httpx.Response = httpx.Response(200, json=synthetic_lightrag_success(chunks=[chunk]))
        self.upstream = Upstream(
            by_host(
                {
                    "ragflow.example.test": ragflow_routes(),
                    "lightrag.example.test": lightrag_routes(lambda request: self.lightrag),
                }
            )
        )


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_RAGFLOW", RAGFLOW_KEY)
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_LIGHTRAG", LIGHTRAG_KEY)
    fake = Server()
    with transport_override(fake.upstream.transport):
        yield fake


@pytest.fixture
def bindings(user: User) -> None:
    binding_create(
        name="lightrag-main", provider="lightrag", base_url=LIGHTRAG_URL, api_key_env="KNOWLEDGEWEB_KEY_LIGHTRAG",
        tools=["knowledge_search", "entity_relations_search"], agent_names=["lead_agent"], users=[user],
    )  # fmt: skip
    binding_create(
        name="ragflow-main", provider="ragflow", base_url=RAGFLOW_URL, api_key_env="KNOWLEDGEWEB_KEY_RAGFLOW",
        tools=["knowledge_search"], users=[user],
    )  # fmt: skip


def post(client: Client, **body: Any) -> httpx.Response:
    payload = {"tool": "knowledge_search", "query": "who founded acme?", "agent_name": "lead_agent", **body}
    return client.post(SEARCH, payload, content_type="application/json")  # type: ignore[return-value]


def assert_refused(response: Any, status: int, detail: str, code: str, server: Server) -> None:
    assert response.status_code == status, response.content
    assert detail in response.json()["detail"]
    assert response.json()["code"] == code
    assert server.upstream.requests == []
    assert Message.objects.count() == 0


def test_a_bound_user_gets_content_and_artifact(server: Server, bindings: None, api_client: Client) -> None:
    response = post(api_client, binding="lightrag-main")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "success"
    assert body["message_id"] is None
    assert "[citation:acme.txt](#knowledge-source-" in body["content"]
    assert body["artifact"]["knowledge_sources"][0]["excerpt"] == "Synthetic: Alice founded Acme."


def test_an_unauthenticated_call_answers_401_and_sends_nothing(server: Server, bindings: None) -> None:
    response = post(Client(), binding="lightrag-main")
    assert response.status_code == 401
    assert server.upstream.requests == []


def test_an_unbound_user_answers_403_and_sends_nothing(
    server: Server, bindings: None, other_user: User
) -> None:
    _, raw = token_create(user=other_user, name="t")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert_refused(
        post(client), 403, "No binding offers knowledge_search to you", "binding_unavailable", server
    )
    assert_refused(
        post(client, binding="lightrag-main"),
        403,
        "No binding named 'lightrag-main'",
        "binding_unavailable",
        server,
    )


def test_a_wrong_agent_name_answers_403(server: Server, bindings: None, api_client: Client) -> None:
    assert_refused(
        post(api_client, binding="lightrag-main", agent_name="researcher"), 403,
        "not available to agent 'researcher'", "forbidden", server,
    )  # fmt: skip


def test_a_disabled_binding_answers_403(server: Server, bindings: None, api_client: Client) -> None:
    KnowledgeBinding.objects.filter(name="lightrag-main").update(enabled=False)
    assert_refused(post(api_client, binding="lightrag-main"), 403, "is disabled", "forbidden", server)


def test_an_unset_credential_answers_403_naming_the_variable(
    server: Server, bindings: None, api_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KNOWLEDGEWEB_KEY_LIGHTRAG")
    assert_refused(
        post(api_client, binding="lightrag-main"),
        403,
        "KNOWLEDGEWEB_KEY_LIGHTRAG",
        "credential_missing",
        server,
    )


def test_a_lightrag_selection_answers_400_before_any_request(
    server: Server, bindings: None, api_client: Client
) -> None:
    scope = {"datasets": [{"dataset_id": "dsA"}]}
    assert_refused(
        post(api_client, binding="lightrag-main", scope=scope), 400,
        "LightRAG accepts only the scope 'all'", "scope_not_supported", server,
    )  # fmt: skip


def test_1001_selected_documents_answer_400(server: Server, bindings: None, api_client: Client) -> None:
    scope = {"datasets": [{"dataset_id": "dsA", "document_ids": [f"d{i}" for i in range(1001)]}]}
    assert_refused(
        post(api_client, binding="ragflow-main", agent_name="", scope=scope), 400,
        "1001 documents are selected; at most 1000", "invalid_scope", server,
    )  # fmt: skip


def test_an_ambiguous_request_names_the_bindings(server: Server, bindings: None, api_client: Client) -> None:
    KnowledgeBinding.objects.filter(name="lightrag-main").update(agent_names=[])
    assert_refused(
        post(api_client, agent_name=""), 400, "name one with 'binding'", "binding_ambiguous", server
    )


def test_another_users_thread_answers_404_and_sends_nothing(
    server: Server, bindings: None, api_client: Client, other_user: User
) -> None:
    theirs = thread_create(owner=other_user, title="Theirs")
    response = post(api_client, binding="lightrag-main", thread_id=str(theirs.id))
    assert response.status_code == 404
    assert server.upstream.requests == []
    assert Message.objects.count() == 0


@pytest.mark.parametrize(
    "changes",
    [{"scope": "everything"}, {"thread_id": "not-a-uuid"}, {"query": None}, {"scope": {"datasets": []}}],
)
def test_a_malformed_body_answers_422(
    server: Server, bindings: None, api_client: Client, changes: dict[str, Any]
) -> None:
    response = post(api_client, binding="lightrag-main", **changes)
    assert response.status_code == 422
    assert response.json()["detail"].startswith("Invalid request:")
    assert server.upstream.requests == []


def test_a_provider_failure_without_a_thread_answers_424_with_a_redacted_reason(
    server: Server, bindings: None, api_client: Client
) -> None:
    server.lightrag = httpx.Response(403, json={"detail": f"Invalid API Key {LIGHTRAG_KEY}"})
    response = post(api_client, binding="lightrag-main")
    assert response.status_code == 424
    assert response.json() == {
        "detail": "knowledge_search failed (LightRAG, binding 'lightrag-main'): "
        "LightRAG rejected the API key (HTTP 403): Invalid API Key [redacted]",
        "code": "provider_auth",
    }
    assert Message.objects.count() == 0


def test_a_provider_failure_with_a_thread_is_recorded_as_an_error_tool_message(
    server: Server, bindings: None, api_client: Client, thread: Thread
) -> None:
    server.lightrag = httpx.Response(500, json={"detail": "Internal server error (error_id: 9)"})
    response = post(api_client, binding="lightrag-main", thread_id=str(thread.id))
    assert response.status_code == 200
    body = response.json()
    message = Message.objects.get()
    assert (body["status"], body["artifact"], body["message_id"], body["error_code"]) == (
        "error",
        {"error": {"code": "provider_server_error"}},
        str(message.id),
        "provider_server_error",
    )
    assert (message.status, message.artifact) == ("error", {"error": {"code": "provider_server_error"}})
    assert "LightRAG answered HTTP 500: Internal server error (error_id: 9)" in message.content
    assert LIGHTRAG_KEY not in response.content.decode()


def test_capabilities_list_the_callers_tools_with_operations(
    server: Server, bindings: None, api_client: Client
) -> None:
    response = api_client.get("/api/knowledge/capabilities", {"agent_name": "lead_agent"})
    assert response.status_code == 200
    assert response.json() == {
        "agent_name": "lead_agent",
        "tools": [
            {"binding": "lightrag-main", "provider": "lightrag", "tool": "knowledge_search",
             "operations": ["search", "sources"], "scope": "all", "top_k": 20,
             "query_modes": ["mix"], "default_mode": "mix"},
            {"binding": "lightrag-main", "provider": "lightrag", "tool": "entity_relations_search",
             "operations": ["search", "sources", "relations_search"], "scope": "all", "top_k": 20,
             "query_modes": ["hybrid"], "default_mode": "hybrid"},
            {"binding": "ragflow-main", "provider": "ragflow", "tool": "knowledge_search",
             "operations": ["search", "sources", "dataset_filter", "document_filter"], "scope": "all", "top_k": 20,
             "query_modes": [], "default_mode": None},
        ],
    }  # fmt: skip
    other = api_client.get("/api/knowledge/capabilities", {"agent_name": "researcher"}).json()
    assert [t["binding"] for t in other["tools"]] == ["ragflow-main"]
    assert server.upstream.requests == []


def test_capabilities_need_authentication(bindings: None) -> None:
    assert Client().get("/api/knowledge/capabilities").status_code == 401


@pytest.mark.parametrize("body", ['"knowledge_search"', "[]", "null", "{"])
def test_a_body_that_is_not_a_json_object_is_refused(
    server: Server, bindings: None, api_client: Client, body: str
) -> None:
    response = api_client.post(SEARCH, body, content_type="application/json")
    assert response.status_code in {400, 422}
    assert response.json()["detail"]
    assert server.upstream.requests == []
