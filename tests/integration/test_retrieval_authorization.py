"""Refusals happen before any request: the transport records zero requests for each."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.providers.client import transport_override
from knowledgeweb.providers.ragflow import DatasetSelection
from knowledgeweb.retrieval import RetrievalInvalidError, RetrievalRefusedError, retrieval_search
from knowledgeweb.threads.errors import ThreadNotFound
from knowledgeweb.threads.models import Message
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
    synthetic_lightrag_success,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_secret_in_logs(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    caplog.set_level(logging.DEBUG)
    yield
    assert RAGFLOW_KEY not in caplog.text
    assert LIGHTRAG_KEY not in caplog.text


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch) -> Iterator[Upstream]:
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_RAGFLOW", RAGFLOW_KEY)
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_LIGHTRAG", LIGHTRAG_KEY)
    server = Upstream(
        by_host(
            {
                "ragflow.example.test": ragflow_routes(),
                "lightrag.example.test": lightrag_routes(synthetic_lightrag_success()),
            }
        )
    )
    with transport_override(server.transport):
        yield server


@pytest.fixture
def lightrag(user: User) -> KnowledgeBinding:
    return binding_create(
        name="lightrag-main",
        provider="lightrag",
        base_url=LIGHTRAG_URL,
        api_key_env="KNOWLEDGEWEB_KEY_LIGHTRAG",
        tools=["knowledge_search", "entity_relations_search"],
        agent_names=["lead_agent"],
        users=[user],
    )


@pytest.fixture
def ragflow(user: User) -> KnowledgeBinding:
    return binding_create(
        name="ragflow-main",
        provider="ragflow",
        base_url=RAGFLOW_URL,
        api_key_env="KNOWLEDGEWEB_KEY_RAGFLOW",
        tools=["knowledge_search"],
        scope="selected",
        selection=[
            {"dataset_id": "dsA", "document_ids": []},
            {"dataset_id": "dsB", "document_ids": ["b1", "b2"]},
        ],
        users=[user],
    )


def refused(upstream: Upstream, error: type[Exception], message: str, **call: object) -> None:
    arguments: dict[str, object] = {
        "tool": "knowledge_search",
        "query": "who founded acme?",
        "agent_name": "lead_agent",
    }
    arguments.update(call)
    with pytest.raises(error, match=message) as caught:
        retrieval_search(**arguments)  # type: ignore[arg-type]
    assert RAGFLOW_KEY not in str(caught.value)
    assert LIGHTRAG_KEY not in str(caught.value)
    assert upstream.requests == []
    assert Message.objects.count() == 0


def test_the_bound_user_with_the_right_agent_name_is_served(
    upstream: Upstream, lightrag: KnowledgeBinding, user: User
) -> None:
    outcome = retrieval_search(
        user=user, tool="knowledge_search", query="who founded acme?", agent_name="lead_agent"
    )
    assert (outcome.status, outcome.binding) == ("success", "lightrag-main")
    assert len(upstream.requests) == 1


def test_an_unbound_user_is_refused(upstream: Upstream, lightrag: KnowledgeBinding, other_user: User) -> None:
    refused(upstream, RetrievalRefusedError, "No binding offers knowledge_search to you", user=other_user)
    refused(
        upstream,
        RetrievalRefusedError,
        "No binding named 'lightrag-main' is available to you",
        user=other_user,
        binding_name="lightrag-main",
    )


def test_a_binding_with_no_users_serves_nobody(
    upstream: Upstream, lightrag: KnowledgeBinding, user: User
) -> None:
    lightrag.users.clear()
    refused(
        upstream,
        RetrievalRefusedError,
        "No binding named 'lightrag-main' is available to you",
        user=user,
        binding_name="lightrag-main",
    )


def test_an_unknown_binding_reads_like_one_that_is_not_yours(upstream: Upstream, user: User) -> None:
    refused(
        upstream,
        RetrievalRefusedError,
        "No binding named 'nope' is available to you",
        user=user,
        binding_name="nope",
    )


@pytest.mark.parametrize("agent_name", ["researcher", "", "LEAD_AGENT", "lead_agent "])
def test_a_wrong_agent_name_is_refused(
    upstream: Upstream, lightrag: KnowledgeBinding, user: User, agent_name: str
) -> None:
    refused(
        upstream,
        RetrievalRefusedError,
        f"not available to agent '{agent_name}'",
        user=user,
        binding_name="lightrag-main",
        agent_name=agent_name,
    )


def test_a_disabled_binding_is_refused(upstream: Upstream, lightrag: KnowledgeBinding, user: User) -> None:
    KnowledgeBinding.objects.filter(pk=lightrag.pk).update(enabled=False)
    refused(
        upstream,
        RetrievalRefusedError,
        "Binding 'lightrag-main' is disabled",
        user=user,
        binding_name="lightrag-main",
    )
    refused(upstream, RetrievalRefusedError, "No binding offers knowledge_search", user=user)


def test_a_binding_whose_scope_is_disabled_runs_no_search(
    upstream: Upstream, lightrag: KnowledgeBinding, user: User
) -> None:
    KnowledgeBinding.objects.filter(pk=lightrag.pk).update(scope="disabled")
    refused(
        upstream,
        RetrievalRefusedError,
        "has its scope disabled; it runs no searches",
        user=user,
        binding_name="lightrag-main",
    )


def test_a_tool_the_binding_does_not_enable_is_refused(
    upstream: Upstream, ragflow: KnowledgeBinding, user: User
) -> None:
    KnowledgeBinding.objects.filter(pk=ragflow.pk).update(tools=["knowledge_search"])
    refused(
        upstream, RetrievalRefusedError, "does not offer the tool entity_relations_search",
        user=user, binding_name="ragflow-main", tool="entity_relations_search", agent_name="",
    )  # fmt: skip


def test_an_unknown_tool_is_invalid(upstream: Upstream, lightrag: KnowledgeBinding, user: User) -> None:
    refused(upstream, RetrievalInvalidError, "Unknown tool 'web_search'", user=user, tool="web_search")


def test_an_unset_credential_is_refused_naming_only_the_variable(
    upstream: Upstream, lightrag: KnowledgeBinding, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KNOWLEDGEWEB_KEY_LIGHTRAG")
    refused(
        upstream, RetrievalRefusedError, "environment variable KNOWLEDGEWEB_KEY_LIGHTRAG that holds this binding's API key is not set; no request was sent",
        user=user, binding_name="lightrag-main",
    )  # fmt: skip


def test_a_lightrag_binding_edited_to_a_selection_in_the_database_is_refused_at_use(
    upstream: Upstream, lightrag: KnowledgeBinding, user: User
) -> None:
    KnowledgeBinding.objects.filter(pk=lightrag.pk).update(
        scope="selected", selection=[{"dataset_id": "dsA", "document_ids": []}]
    )
    refused(
        upstream, RetrievalRefusedError, "misconfigured.*LightRAG accepts only the scopes 'all' and 'disabled'",
        user=user, binding_name="lightrag-main",
    )  # fmt: skip


def test_a_binding_edited_to_1001_documents_in_the_database_is_refused_at_use(
    upstream: Upstream, ragflow: KnowledgeBinding, user: User
) -> None:
    documents = [f"d{i}" for i in range(1001)]
    KnowledgeBinding.objects.filter(pk=ragflow.pk).update(
        selection=[{"dataset_id": "dsA", "document_ids": documents}]
    )
    refused(
        upstream,
        RetrievalRefusedError,
        "1001 documents are selected; at most 1000",
        user=user,
        binding_name="ragflow-main",
        agent_name="",
    )


def test_a_binding_edited_to_top_k_0_in_the_database_is_refused_at_use(
    upstream: Upstream, lightrag: KnowledgeBinding, user: User
) -> None:
    KnowledgeBinding.objects.filter(pk=lightrag.pk).update(top_k=0)
    refused(
        upstream,
        RetrievalRefusedError,
        "top_k: Enter a whole number from 1 to 100",
        user=user,
        binding_name="lightrag-main",
    )


def test_a_lightrag_search_with_a_dataset_selection_is_rejected_before_any_request(
    upstream: Upstream, lightrag: KnowledgeBinding, user: User
) -> None:
    refused(
        upstream, RetrievalInvalidError, "LightRAG accepts only the scope 'all'; a dataset or document selection is refused before any request",
        user=user, binding_name="lightrag-main", scope=[DatasetSelection("dsA")],
    )  # fmt: skip


def test_a_requested_selection_of_1001_documents_is_rejected(
    upstream: Upstream, ragflow: KnowledgeBinding, user: User
) -> None:
    selection = [DatasetSelection("dsA", tuple(f"a{i}" for i in range(1001)))]
    refused(
        upstream,
        RetrievalInvalidError,
        "1001 documents are selected",
        user=user,
        binding_name="ragflow-main",
        agent_name="",
        scope=selection,
    )


@pytest.mark.parametrize(
    ("selection", "message"),
    [
        ([DatasetSelection("dsZ")], "Dataset dsZ is outside the scope of binding 'ragflow-main'"),
        ([DatasetSelection("dsB")], "allows only selected documents of dataset dsB, not the whole dataset"),
        ([DatasetSelection("dsB", ("b3",))], "Document b3 is outside the scope"),
    ],
)
def test_a_caller_cannot_widen_the_bindings_selection(
    upstream: Upstream, ragflow: KnowledgeBinding, user: User, selection: list[DatasetSelection], message: str
) -> None:
    refused(
        upstream,
        RetrievalRefusedError,
        message,
        user=user,
        binding_name="ragflow-main",
        agent_name="",
        scope=selection,
    )


def test_several_usable_bindings_need_a_name(
    upstream: Upstream, lightrag: KnowledgeBinding, ragflow: KnowledgeBinding, user: User
) -> None:
    KnowledgeBinding.objects.filter(pk=lightrag.pk).update(agent_names=[])
    refused(
        upstream, RetrievalInvalidError, r"Several bindings offer knowledge_search to you \('lightrag-main', 'ragflow-main'\); name one",
        user=user, agent_name="",
    )  # fmt: skip


def test_another_users_thread_is_not_found_before_any_request(
    upstream: Upstream, lightrag: KnowledgeBinding, user: User, other_user: User
) -> None:
    theirs = thread_create(owner=other_user, title="Theirs")
    refused(upstream, ThreadNotFound, "Thread not found", user=user, thread_id=theirs.id)


@pytest.mark.parametrize(
    ("query", "message"), [("   ", "The query is empty"), ("x" * 4001, "longer than 4000")]
)
def test_an_empty_or_huge_query_is_invalid(
    upstream: Upstream, lightrag: KnowledgeBinding, user: User, query: str, message: str
) -> None:
    refused(upstream, RetrievalInvalidError, message, user=user, query=query)


@pytest.mark.parametrize(
    ("refusal", "message"),
    [
        ("unbound", "No binding named 'lightrag-main' is available to you"),
        ("wrong-agent", "not available to agent 'researcher'"),
        ("disabled", "Binding 'lightrag-main' is disabled"),
        ("unset-env", "KNOWLEDGEWEB_KEY_LIGHTRAG that holds this binding's API key is not set"),
    ],
)
def test_a_refusal_with_a_thread_writes_nothing_to_it(
    upstream: Upstream,
    lightrag: KnowledgeBinding,
    user: User,
    monkeypatch: pytest.MonkeyPatch,
    refusal: str,
    message: str,
) -> None:
    agent_name = "researcher" if refusal == "wrong-agent" else "lead_agent"
    if refusal == "unbound":
        lightrag.users.clear()
    elif refusal == "disabled":
        KnowledgeBinding.objects.filter(pk=lightrag.pk).update(enabled=False)
    elif refusal == "unset-env":
        monkeypatch.delenv("KNOWLEDGEWEB_KEY_LIGHTRAG")
    mine = thread_create(owner=user, title="Mine")
    refused(
        upstream, RetrievalRefusedError, message,
        user=user, binding_name="lightrag-main", agent_name=agent_name, thread_id=mine.id,
    )  # fmt: skip
