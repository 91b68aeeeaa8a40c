"""RAGFlow politeness across searches, against a RAGFlow-shaped server on loopback (synthetic payloads).

- at most 4 requests in flight at one host across concurrent searches in the process;
- a selection whose documents were confirmed is not checked again for a bounded time;
- each selection is checked against the rules once per search.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client, override_settings

from knowledgeweb.bindings import rules
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.providers.ragflow import DatasetSelection, RagflowProvider, ragflow_connection
from knowledgeweb.providers.ragflow import adapter as ragflow_adapter
from knowledgeweb.providers.ragflow import scope as ragflow_scope
from knowledgeweb.retrieval import RetrievalFailedError, retrieval_search, selections
from knowledgeweb.retrieval import scope as retrieval_scope
from knowledgeweb.threads.models import Message
from tests.local_servers import RagflowServer, synthetic_dataset

KEY = "ragflow-SyntheticPolitenessKey0123456789"
DOCUMENTS = tuple(f"d{i:04d}" for i in range(1000))
SELECTION = [{"dataset_id": "dsA", "document_ids": list(DOCUMENTS)}]


class Gate:
    """The first 4 document checks wait for each other, then linger so a fifth could join them if allowed."""

    def __init__(self) -> None:
        self.barrier = threading.Barrier(4, timeout=10)
        self.lock = threading.Lock()
        self.entered = 0

    def __call__(self, path: str) -> None:
        if not path.endswith("/documents"):
            return
        with self.lock:
            self.entered += 1
            first_wave = self.entered <= 4
        if first_wave:
            self.barrier.wait()
            threading.Event().wait(0.2)


def test_three_concurrent_searches_never_put_more_than_four_requests_in_flight_at_the_host() -> None:
    server = RagflowServer(datasets=[synthetic_dataset("dsA")], gate=Gate())
    errors: list[BaseException] = []

    def search() -> None:
        connection = ragflow_connection(base_url=server.url, api_key=KEY, timeout=30)
        selection = [DatasetSelection("dsA", DOCUMENTS)]
        try:
            result = RagflowProvider(connection=connection, selection=selection).search("warranty?")
            assert len(result.hits) == 1
        except BaseException as exc:
            errors.append(exc)

    try:
        searches = [threading.Thread(target=search) for _ in range(3)]
        for thread in searches:
            thread.start()
        for thread in searches:
            thread.join(60)
    finally:
        server.close()
    assert errors == []
    # Each search: 1 dataset list + 10 document checks (4 at once) + 1 retrieval.
    assert (server.count("/datasets"), server.count("/documents"), server.count("/retrieval")) == (3, 30, 3)
    # Per search the cap would allow 12 at once here; held per host it is 4, and the gate saw 4.
    assert server.most == 4


@pytest.fixture
def binding(user: User, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[KnowledgeBinding, RagflowServer]]:
    cache.clear()
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_RAGFLOW", KEY)
    server = RagflowServer(datasets=[synthetic_dataset("dsA")])
    made = binding_create(
        name="ragflow-local",
        provider="ragflow",
        base_url=server.url,
        api_key_env="KNOWLEDGEWEB_KEY_RAGFLOW",
        tools=["knowledge_search"],
        users=[user],
        scope="selected",
        selection=SELECTION,
    )
    yield made, server
    server.close()
    cache.clear()


def search(user: User) -> str:
    outcome = retrieval_search(
        user=user, tool="knowledge_search", query="warranty?", binding_name="ragflow-local"
    )
    return outcome.status


@pytest.mark.django_db
def test_repeating_a_1000_document_search_makes_no_validation_requests(
    binding: tuple[KnowledgeBinding, RagflowServer], user: User
) -> None:
    _, server = binding
    assert search(user) == "success"
    assert server.count("/documents") == 10
    assert search(user) == "success"
    assert server.count("/documents") == 10  # the second search checked nothing again
    assert (server.count("/datasets"), server.count("/retrieval")) == (2, 2)


@pytest.mark.django_db
def test_a_remembered_selection_expires_after_its_ttl(
    binding: tuple[KnowledgeBinding, RagflowServer], user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, server = binding
    now = [1_000_000.0]
    monkeypatch.setattr(selections, "_now", lambda: now[0])
    with override_settings(KNOWLEDGEWEB_RAGFLOW_SELECTION_TTL=60):
        search(user)
        now[0] += 59
        search(user)
        assert server.count("/documents") == 10
        now[0] += 1  # 60 s after the check: expired
        search(user)
        assert server.count("/documents") == 20
        now[0] += 30
        search(user)
        assert server.count("/documents") == 20


@pytest.mark.django_db
def test_a_ttl_of_zero_checks_every_search(
    binding: tuple[KnowledgeBinding, RagflowServer], user: User
) -> None:
    _, server = binding
    with override_settings(KNOWLEDGEWEB_RAGFLOW_SELECTION_TTL=0):
        search(user)
        search(user)
    assert server.count("/documents") == 20


@pytest.mark.django_db
def test_the_memory_is_per_binding_and_selection(
    binding: tuple[KnowledgeBinding, RagflowServer], user: User
) -> None:
    made, server = binding
    search(user)
    narrower = [{"dataset_id": "dsA", "document_ids": list(DOCUMENTS[:150])}]
    retrieval_search(
        user=user,
        tool="knowledge_search",
        query="warranty?",
        binding_name="ragflow-local",
        scope=[DatasetSelection("dsA", DOCUMENTS[:150])],
    )
    assert server.count("/documents") == 12  # a different selection is checked (2 batches)
    KnowledgeBinding.objects.filter(pk=made.pk).update(name="ragflow-renamed")
    other = binding_create(
        name="ragflow-local",
        provider="ragflow",
        base_url=server.url,
        api_key_env="KNOWLEDGEWEB_KEY_RAGFLOW",
        tools=["knowledge_search"],
        users=[user],
        scope="selected",
        selection=narrower,
    )
    assert other.pk != made.pk
    search(user)
    assert server.count("/documents") == 14  # another binding remembers nothing of the first


@pytest.mark.django_db
def test_a_failed_check_is_not_remembered(
    binding: tuple[KnowledgeBinding, RagflowServer], user: User
) -> None:
    _, server = binding
    server.unsearchable = {"d0733"}
    for attempt in (1, 2):
        with pytest.raises(RetrievalFailedError, match="document d0733 in dataset dsA is not searchable"):
            search(user)
        assert server.count("/retrieval") == 0
        assert server.count("/documents") >= 8 * attempt  # checked again: nothing was remembered
    server.unsearchable = set()
    search(user)
    checked = server.count("/documents")
    search(user)
    assert server.count("/documents") == checked
    assert Message.objects.count() == 0


@pytest.mark.django_db
def test_each_selection_is_checked_against_the_rules_once_per_search(
    binding: tuple[KnowledgeBinding, RagflowServer],
    user: User,
    api_client: Client,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checked: list[int] = []
    real = ragflow_scope.selection_problems

    def counting(selection: object) -> list[str]:
        items = list(selection)  # type: ignore[call-overload]
        checked.append(sum(len(item.document_ids) for item in items))
        return real(items)

    for module in (rules, retrieval_scope, ragflow_adapter):
        monkeypatch.setattr(module, "selection_problems", counting)
    # The configured selection (1000 documents), through the API.
    response = api_client.post(
        "/api/knowledge/search",
        {"tool": "knowledge_search", "query": "warranty?", "binding": "ragflow-local"},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    assert checked == [1000]
    checked.clear()
    # A requested narrower selection: the configured one by the rules, the requested one once.
    scope = {"datasets": [{"dataset_id": "dsA", "document_ids": list(DOCUMENTS[:5])}]}
    response = api_client.post(
        "/api/knowledge/search",
        {"tool": "knowledge_search", "query": "warranty?", "binding": "ragflow-local", "scope": scope},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    assert sorted(checked) == [5, 1000]
