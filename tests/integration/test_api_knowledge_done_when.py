"""Issue 4, "Done when": retrieval through the API, then an answer whose citations all resolve.

A bound user runs both LightRAG tools and the RAGFlow tool through
``POST /api/knowledge/search`` with ``thread_id``; an AI message citing those
results is appended; ``/api/threads/{id}/citations`` reports every citation as
resolved. An unbound user gets 403 and no upstream request. Upstream answers are
synthetic payloads shaped after docs/providers.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.accounts.services import token_create
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.threads.models import Message
from tests.synthetic import (
    LIGHTRAG_URL,
    RAGFLOW_URL,
    Upstream,
    lightrag_routes,
    ragflow_routes,
    serving,
    synthetic_lightrag_chunk,
    synthetic_lightrag_entity,
    synthetic_lightrag_relationship,
    synthetic_lightrag_success,
    synthetic_ragflow_chunk,
    synthetic_ragflow_retrieval,
)

pytestmark = pytest.mark.django_db

FOUNDING = synthetic_lightrag_chunk("doc-aaa-chunk-000", "Synthetic: Alice founded Acme in 1999.")
LEADERSHIP = synthetic_lightrag_chunk(
    "doc-bbb-chunk-000", "Synthetic: Bob became CEO of Acme in 2010.", "people.md", "2"
)


def lightrag(request: httpx.Request) -> httpx.Response:
    if json.loads(request.content)["mode"] == "hybrid":
        return httpx.Response(
            200,
            json=synthetic_lightrag_success(
                mode="hybrid",
                chunks=[FOUNDING, LEADERSHIP],
                entities=[
                    synthetic_lightrag_entity("Acme", "Synthetic: an anvil maker.", "doc-aaa-chunk-000")
                ],
                relationships=[
                    synthetic_lightrag_relationship(
                        "Bob", "Acme", "Synthetic: Bob leads Acme.", "doc-bbb-chunk-000"
                    )
                ],
            ),
        )
    return httpx.Response(200, json=synthetic_lightrag_success(chunks=[FOUNDING]))


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch) -> Iterator[Upstream]:
    ragflow_chunk = synthetic_ragflow_chunk(content="Synthetic: Acme anvils carry a two-year warranty.")
    with serving(
        monkeypatch,
        ragflow=ragflow_routes(retrieval=synthetic_ragflow_retrieval([ragflow_chunk])),
        lightrag=lightrag_routes(lightrag),
    ) as server:
        yield server


@pytest.fixture
def bindings(user: User) -> None:
    binding_create(
        name="lightrag-main", provider="lightrag", base_url=LIGHTRAG_URL, api_key_env="KNOWLEDGEWEB_KEY_LIGHTRAG",
        tools=["knowledge_search", "entity_relations_search"], agent_names=["lead_agent"], users=[user],
    )  # fmt: skip
    binding_create(
        name="ragflow-main", provider="ragflow", base_url=RAGFLOW_URL, api_key_env="KNOWLEDGEWEB_KEY_RAGFLOW",
        tools=["knowledge_search"], agent_names=["lead_agent"], users=[user],
    )  # fmt: skip


def search(client: Client, thread_id: str, tool: str, binding: str) -> dict[str, object]:
    response = client.post(
        "/api/knowledge/search",
        {
            "tool": tool,
            "query": "who runs acme?",
            "agent_name": "lead_agent",
            "binding": binding,
            "thread_id": thread_id,
        },
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    body: dict[str, object] = response.json()
    assert body["status"] == "success"
    return body


def test_answers_citing_all_three_tools_resolve_through_the_citation_report(
    upstream: Upstream, bindings: None, api_client: Client
) -> None:
    thread = api_client.post(
        "/api/threads",
        {"title": "Who runs Acme?", "agent_name": "lead_agent"},
        content_type="application/json",
    ).json()
    documents = search(api_client, thread["id"], "knowledge_search", "lightrag-main")
    relations = search(api_client, thread["id"], "entity_relations_search", "lightrag-main")
    ragflow = search(api_client, thread["id"], "knowledge_search", "ragflow-main")

    founding = documents["artifact"]["knowledge_sources"][0]["id"]  # type: ignore[index]
    leadership = relations["artifact"]["knowledge_sources"][0]["id"]  # type: ignore[index]
    native = ragflow["artifact"]["knowledge_sources"]["sources"][0]["id"]  # type: ignore[index]
    answer = (
        f"Alice founded Acme [citation:acme.txt](#knowledge-source-{founding}); "
        f"Bob leads it [citation:people.md](#user-content-knowledge-source-{leadership}); "
        f"its anvils carry a two-year warranty [citation:1](#knowledge-{native})."
    )
    appended = api_client.post(
        f"/api/threads/{thread['id']}/messages",
        {"type": "ai", "content": answer},
        content_type="application/json",
    )
    assert appended.status_code == 201

    report = api_client.get(f"/api/threads/{thread['id']}/citations").json()
    (entry,) = report["messages"]
    assert [
        (c["state"], c["source"]["provider"], c["source"]["title"], c["source"]["excerpt"])
        for c in entry["citations"]
    ] == [
        ("resolved", "lightrag", "acme.txt", "Synthetic: Alice founded Acme in 1999."),
        ("resolved", "lightrag", "people.md", "Synthetic: Bob became CEO of Acme in 2010."),
        ("resolved", "ragflow", "warranty.pdf", "Synthetic: Acme anvils carry a two-year warranty."),
    ]
    assert entry["citations"][2]["source"]["form"] == "native"
    assert entry["citations"][2]["source"]["dataset_name"] == "Product manuals"
    assert [m.type for m in Message.objects.order_by("seq")] == ["tool", "tool", "tool", "ai"]
    assert [m.name for m in Message.objects.order_by("seq")][:3] == [
        "knowledge_search",
        "entity_relations_search",
        "knowledge_search",
    ]


def test_an_unbound_user_gets_403_and_no_upstream_request(
    upstream: Upstream, bindings: None, other_user: User
) -> None:
    _, raw = token_create(user=other_user, name="t")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    for tool, binding in [
        ("knowledge_search", "lightrag-main"),
        ("entity_relations_search", "lightrag-main"),
        ("knowledge_search", "ragflow-main"),
    ]:
        response = client.post(
            "/api/knowledge/search",
            {"tool": tool, "query": "who runs acme?", "agent_name": "lead_agent", "binding": binding},
            content_type="application/json",
        )
        assert response.status_code == 403
    assert upstream.requests == []
    assert Message.objects.count() == 0
