"""The retrieval service end to end: evidence written by the server, budgets, scope, registry, capabilities."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.knowledge import KnowledgeCapabilities, RetrievalHit, RetrievalResult
from knowledgeweb.providers.ragflow import DatasetSelection
from knowledgeweb.retrieval import retrieval_capabilities, retrieval_record, retrieval_search, service
from knowledgeweb.threads.evidence import message_sources
from knowledgeweb.threads.models import Message, Thread
from tests.synthetic import (
    LIGHTRAG_URL,
    RAGFLOW_KEY,
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
    synthetic_ragflow_dataset,
    synthetic_ragflow_datasets,
    synthetic_ragflow_document,
    synthetic_ragflow_documents,
    synthetic_ragflow_retrieval,
)

pytestmark = pytest.mark.django_db

CHUNKS = [
    synthetic_lightrag_chunk("doc-aaa-chunk-000", "Synthetic: Alice founded Acme in 1999."),
    synthetic_lightrag_chunk("doc-bbb-chunk-000", "Synthetic: Bob became CEO of Acme.", "people.md", "2"),
]
GRAPH = synthetic_lightrag_success(
    mode="hybrid",
    chunks=CHUNKS,
    entities=[synthetic_lightrag_entity("Acme", "Synthetic: an anvil maker.", "doc-aaa-chunk-000")],
    relationships=[
        synthetic_lightrag_relationship(
            "Alice", "Acme", "Synthetic: Alice founded Acme.", "doc-aaa-chunk-000"
        ),
        synthetic_lightrag_relationship("Bob", "Acme", "Synthetic: Bob leads Acme.", "doc-bbb-chunk-000"),
        synthetic_lightrag_relationship("Bob", "Lyon", "Synthetic: Bob lived in Lyon.", "doc-zzz-chunk-404"),
    ],
)
DATASETS = synthetic_ragflow_datasets(
    [
        synthetic_ragflow_dataset(id="dsA", name="Manuals"),
        synthetic_ragflow_dataset(id="dsB", name="Policies"),
    ]
)


def documents(request: httpx.Request) -> httpx.Response:
    dataset_id = request.url.path.split("/")[4]
    ids = request.url.params.get_list("ids")
    return httpx.Response(
        200, json=synthetic_ragflow_documents([synthetic_ragflow_document(i, dataset_id) for i in ids])
    )


def lightrag_answer(request: httpx.Request) -> httpx.Response:
    import json

    mode = json.loads(request.content)["mode"]
    return httpx.Response(200, json=GRAPH if mode == "hybrid" else synthetic_lightrag_success(chunks=CHUNKS))


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch) -> Iterator[Upstream]:
    chunk = synthetic_ragflow_chunk(dataset_id="dsA")
    with serving(
        monkeypatch,
        ragflow=ragflow_routes(
            retrieval=synthetic_ragflow_retrieval([chunk]), datasets=DATASETS, documents=documents
        ),
        lightrag=lightrag_routes(lightrag_answer),
    ) as server:
        yield server


@pytest.fixture
def lightrag(user: User) -> KnowledgeBinding:
    return binding_create(
        name="lightrag-main", provider="lightrag", base_url=LIGHTRAG_URL, api_key_env="KNOWLEDGEWEB_KEY_LIGHTRAG",
        tools=["knowledge_search", "entity_relations_search"], users=[user], top_k=7,
    )  # fmt: skip


@pytest.fixture
def ragflow(user: User) -> KnowledgeBinding:
    return binding_create(
        name="ragflow-main", provider="ragflow", base_url=RAGFLOW_URL, api_key_env="KNOWLEDGEWEB_KEY_RAGFLOW",
        tools=["knowledge_search"], users=[user], timeout=12,
    )  # fmt: skip


def test_a_lightrag_search_appends_a_tool_message_with_server_written_evidence(
    upstream: Upstream, lightrag: KnowledgeBinding, user: User, thread: Thread
) -> None:
    outcome = retrieval_search(
        user=user, tool="knowledge_search", query="who founded acme?", thread_id=thread.id
    )
    message = Message.objects.get()
    assert (outcome.message_id, outcome.status, outcome.provider) == (message.id, "success", "lightrag")
    assert (message.type, message.name, message.status) == ("tool", "knowledge_search", "success")
    assert message.tool_call_id.startswith("call_")
    assert (message.content, message.artifact) == (outcome.content, outcome.artifact)
    sources = message_sources(message)
    assert sorted((e.title, e.excerpt) for e in sources.values()) == [
        ("acme.txt", "Synthetic: Alice founded Acme in 1999."),
        ("people.md", "Synthetic: Bob became CEO of Acme."),
    ]
    assert upstream.bodies("/query/data") == [
        {"query": "who founded acme?", "mode": "mix", "top_k": 7, "chunk_top_k": 7}
    ]


def test_without_a_thread_nothing_is_written(
    upstream: Upstream, lightrag: KnowledgeBinding, user: User
) -> None:
    outcome = retrieval_search(user=user, tool="knowledge_search", query="who founded acme?")
    assert outcome.message_id is None
    assert "[citation:acme.txt](#knowledge-source-" in outcome.content
    assert Message.objects.count() == 0


def test_an_outcome_searched_first_is_recorded_later_with_its_evidence_once(
    upstream: Upstream, lightrag: KnowledgeBinding, user: User, thread: Thread
) -> None:
    outcome = retrieval_search(user=user, tool="entity_relations_search", query="who founded acme?")
    recorded = retrieval_record(thread=thread, outcome=outcome)

    message = Message.objects.get()
    assert recorded.message_id == message.id
    assert (message.name, message.content, message.artifact) == (
        "entity_relations_search",
        outcome.content,
        outcome.artifact,
    )
    assert message_sources(message)
    with pytest.raises(ValueError, match="not yet recorded"):
        retrieval_record(thread=thread, outcome=recorded)
    assert Message.objects.count() == 1


def test_a_failed_outcome_is_never_recorded_as_evidence(
    upstream: Upstream, lightrag: KnowledgeBinding, user: User, thread: Thread
) -> None:
    failed = service.SearchOutcome(
        content="knowledge_search failed", artifact=None, status="error", binding="b", provider="lightrag"
    )
    with pytest.raises(ValueError, match="only a successful outcome"):
        retrieval_record(thread=thread, outcome=failed)
    assert Message.objects.count() == 0


def test_entity_relations_store_only_chunk_evidence_and_label_graph_facts(
    upstream: Upstream, lightrag: KnowledgeBinding, user: User, thread: Thread
) -> None:
    outcome = retrieval_search(
        user=user, tool="entity_relations_search", query="how is bob related to acme?", thread_id=thread.id
    )
    message = Message.objects.get()
    assert message.name == "entity_relations_search"
    assert sorted(e.excerpt for e in message_sources(message).values()) == sorted(
        c["content"] for c in CHUNKS
    )
    assert (
        "Graph relation (unattributed graph fact): Alice -> Acme\nSynthetic: Alice founded Acme.\nEvidence: [1]"
        in outcome.content
    )
    assert (
        "Graph relation (unattributed graph fact): Bob -> Acme\nSynthetic: Bob leads Acme.\nEvidence: [3]"
        in outcome.content
    )
    assert (
        "Bob -> Lyon\nSynthetic: Bob lived in Lyon.\nEvidence: none (no document evidence" in outcome.content
    )
    assert "Graph entity (organization) (unattributed graph fact): Acme" in outcome.content
    assert upstream.bodies("/query/data")[0]["mode"] == "hybrid"


def test_a_complete_ragflow_answer_is_stored_as_a_native_snapshot(
    upstream: Upstream, ragflow: KnowledgeBinding, user: User, thread: Thread
) -> None:
    retrieval_search(user=user, tool="knowledge_search", query="warranty?", thread_id=thread.id)
    message = Message.objects.get()
    assert message.artifact["knowledge_sources"]["version"] == 1  # type: ignore[index]
    (evidence,) = message_sources(message).values()
    assert (evidence.form, evidence.title, evidence.dataset_name, evidence.pages) == (
        "native",
        "warranty.pdf",
        "Manuals",
        (3,),
    )
    assert evidence.url is None
    assert all(r.headers["Authorization"] == f"Bearer {RAGFLOW_KEY}" for r in upstream.requests)


def test_the_bindings_selection_is_validated_and_searched(
    upstream: Upstream, ragflow: KnowledgeBinding, user: User
) -> None:
    KnowledgeBinding.objects.filter(pk=ragflow.pk).update(
        scope="selected", selection=[{"dataset_id": "dsB", "document_ids": ["b2", "b1"]}]
    )
    retrieval_search(user=user, tool="knowledge_search", query="warranty?")
    assert upstream.paths() == ["/api/v1/datasets", "/api/v1/datasets/dsB/documents", "/api/v1/retrieval"]
    (body,) = upstream.bodies("/api/v1/retrieval")
    assert (body["dataset_ids"], body["document_ids"]) == (["dsB"], ["b2", "b1"])


def test_a_caller_may_narrow_the_scope(upstream: Upstream, ragflow: KnowledgeBinding, user: User) -> None:
    retrieval_search(
        user=user, tool="knowledge_search", query="warranty?", scope=[DatasetSelection("dsA", ("a9",))]
    )
    (body,) = upstream.bodies("/api/v1/retrieval")
    assert (body["dataset_ids"], body["document_ids"]) == (["dsA"], ["a9"])


def test_the_default_tool_output_budget_is_applied(
    upstream: Upstream, lightrag: KnowledgeBinding, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    real = service.enforce_output_budget

    def spy(content: str, artifact: object, limit: int) -> tuple[str, dict[str, object] | None]:
        calls.append(limit)
        return real(content, artifact, limit)

    monkeypatch.setattr(service, "enforce_output_budget", spy)
    retrieval_search(user=user, tool="knowledge_search", query="who founded acme?")
    assert calls == [service.TOOL_OUTPUT_LIMIT]


def test_the_output_budget_prunes_evidence_with_the_text(
    upstream: Upstream,
    lightrag: KnowledgeBinding,
    user: User,
    thread: Thread,
) -> None:
    outcome = retrieval_search(
        user=user, tool="knowledge_search", query="who founded acme?", thread_id=thread.id, output_limit=260
    )
    assert len(outcome.content) <= 260
    assert "Output truncated to fit the tool output budget of 260 characters" in outcome.content
    sources = message_sources(Message.objects.get())
    assert len(sources) == len(outcome.artifact["knowledge_sources"]) == 1  # type: ignore[index]
    assert [e.title for e in sources.values()] == ["acme.txt"]
    assert "Bob became CEO" not in outcome.content


class FakeLocalProvider:
    """Stands in for the library's LocalProvider: the registry must import it lazily."""

    made: list[int] = []
    collection_ids: list[Any] = []

    def __init__(self, *, top_k: int = 20, collection_ids: Any = None) -> None:
        FakeLocalProvider.made.append(top_k)
        FakeLocalProvider.collection_ids.append(collection_ids)

    def capabilities(self) -> Sequence[KnowledgeCapabilities]:
        return (KnowledgeCapabilities(provider="local", tool="knowledge_search"),)

    def search(self, query: str, *, tool: str = "knowledge_search", top_k: int = 20) -> RetrievalResult:
        hit = RetrievalHit(text="Synthetic local text.", title="Local guide", dataset_name="demo")
        return RetrievalResult(provider="local", query=query, tool=tool, hits=(hit,))


def test_local_bindings_dispatch_to_the_library_provider_without_url_or_credential(
    upstream: Upstream, user: User, thread: Thread, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("knowledgeweb.library.provider_spec.LocalProvider", FakeLocalProvider)
    FakeLocalProvider.made.clear()
    binding_create(name="local", provider="local", tools=["knowledge_search"], users=[user], top_k=5)
    outcome = retrieval_search(user=user, tool="knowledge_search", query="guide", thread_id=thread.id)
    assert FakeLocalProvider.made[-1] == 5
    assert FakeLocalProvider.collection_ids[-1] is None  # scope 'all': every collection
    (evidence,) = message_sources(Message.objects.get()).values()
    assert (evidence.provider, evidence.title, evidence.dataset_name) == ("local", "Local guide", "demo")
    assert outcome.provider == "local"
    assert upstream.requests == []
    assert [c.tool for c in retrieval_capabilities(user=user, agent_name="")] == ["knowledge_search"]


def test_capabilities_list_only_what_the_caller_could_run(
    upstream: Upstream,
    lightrag: KnowledgeBinding,
    ragflow: KnowledgeBinding,
    user: User,
    other_user: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    offered = retrieval_capabilities(user=user, agent_name="anyone")
    assert [(c.binding, c.tool, c.operations) for c in offered] == [
        ("lightrag-main", "knowledge_search", ("search", "sources")),
        ("lightrag-main", "entity_relations_search", ("search", "sources", "relations_search")),
        ("ragflow-main", "knowledge_search", ("search", "sources", "dataset_filter", "document_filter")),
    ]
    assert retrieval_capabilities(user=other_user, agent_name="anyone") == []
    KnowledgeBinding.objects.filter(pk=lightrag.pk).update(
        agent_names=["lead_agent"], tools=["knowledge_search"]
    )
    monkeypatch.delenv("KNOWLEDGEWEB_KEY_RAGFLOW")
    assert [(c.binding, c.tool) for c in retrieval_capabilities(user=user, agent_name="lead_agent")] == [
        ("lightrag-main", "knowledge_search")
    ]
    assert retrieval_capabilities(user=user, agent_name="researcher") == []
    KnowledgeBinding.objects.filter(pk=lightrag.pk).update(scope="disabled")
    assert retrieval_capabilities(user=user, agent_name="lead_agent") == []
    assert upstream.requests == []
