"""RAGFlow ``knowledge_search`` (docs/providers.md, RAGFlow)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from knowledgeweb.knowledge.types import KnowledgeCapabilities, RetrievalHit, RetrievalResult
from knowledgeweb.providers.client import Connection, ProviderSession
from knowledgeweb.providers.errors import MalformedResponseError, ScopeRejectedError, UnsupportedToolError
from knowledgeweb.providers.memory import SelectionMemory
from knowledgeweb.providers.ragflow.chunks import chunk_hit, titles_from_doc_aggs
from knowledgeweb.providers.ragflow.datasets import Dataset, dataset_list
from knowledgeweb.providers.ragflow.documents import MAX_BATCHES_IN_FLIGHT, validate_documents
from knowledgeweb.providers.ragflow.replies import ragflow_data
from knowledgeweb.providers.ragflow.scope import CheckedSelection, DatasetSelection, selection_problems

PROVIDER = "ragflow"
TOOL = "knowledge_search"
#: v0.26 rejects a larger page size.
MAX_PAGE_SIZE = 100
#: RAGFlow's own default candidate pool for the vector search.
CANDIDATE_POOL = 1024

CAPABILITIES = (
    KnowledgeCapabilities(
        provider=PROVIDER,
        tool=TOOL,
        operations=("search", "sources", "dataset_filter", "document_filter"),
    ),
)


def ragflow_connection(*, base_url: str, api_key: str, timeout: float) -> Connection:
    """RAGFlow authenticates with ``Authorization: Bearer <key>``.

    At most 4 requests are in flight at one RAGFlow host across the whole process,
    whatever the number of concurrent searches (docs/providers.md's cap, held per host).
    """
    return Connection(
        label="RAGFlow",
        base_url=base_url,
        timeout=timeout,
        headers={"Authorization": f"Bearer {api_key}"},
        secrets=(api_key,),
        max_in_flight=MAX_BATCHES_IN_FLIGHT,
    )


class RagflowProvider:
    """Searches the datasets a RAGFlow key can see, or a validated selection of them.

    A ``CheckedSelection`` has already passed ``selection_problems`` (the retrieval
    service checks each selection once per search: a configured one with the
    binding's rules, a requested one when it resolves the scope); any other
    selection is checked here, before any request. Then each document is checked
    with RAGFlow, unless ``memory`` recalls the selection as confirmed.
    """

    def __init__(
        self,
        *,
        connection: Connection,
        selection: Sequence[DatasetSelection] | None = None,
        memory: SelectionMemory | None = None,
    ) -> None:
        self._connection = connection
        self._selection = CheckedSelection(selection) if selection is not None else None
        self._checked = isinstance(selection, CheckedSelection)
        self._memory = memory

    def capabilities(self) -> Sequence[KnowledgeCapabilities]:
        return CAPABILITIES

    def search(self, query: str, *, tool: str = TOOL, top_k: int = 20) -> RetrievalResult:
        if tool != TOOL:
            raise UnsupportedToolError(f"RAGFlow offers only {TOOL}, not {tool}.")
        if self._selection is not None and not self._checked:
            problems = selection_problems(self._selection)
            if problems:
                raise ScopeRejectedError("The selected scope was rejected: " + " ".join(problems))
        page_size = max(1, min(top_k, MAX_PAGE_SIZE))
        with ProviderSession(self._connection) as session:
            datasets = dataset_list(session)
            targets = self._targets(session, datasets)
            hits: list[RetrievalHit] = []
            groups = _groups(targets)
            for dataset_ids, document_ids in groups:
                hits.extend(self._retrieve(session, query, dataset_ids, document_ids, page_size, datasets))
        if len(groups) > 1:
            # Separate calls are merged by RAGFlow's own similarity, best first.
            hits.sort(key=lambda hit: -(hit.score if hit.score is not None else float("-inf")))
        return RetrievalResult(provider=PROVIDER, query=query, hits=tuple(hits[:page_size]), tool=TOOL)

    def _targets(
        self, session: ProviderSession, datasets: list[Dataset]
    ) -> list[tuple[Dataset, tuple[str, ...]]]:
        """What to search: every visible dataset, or the selection once every document is validated."""
        if self._selection is None:
            return [(dataset, ()) for dataset in datasets]
        visible = {dataset.id: dataset for dataset in datasets}
        missing = [item.dataset_id for item in self._selection if item.dataset_id not in visible]
        if missing:
            raise ScopeRejectedError(
                "The selected scope was rejected: "
                + ", ".join(f"dataset {dataset_id}" for dataset_id in missing)
                + " is not visible to this binding's API key."
            )
        selection: tuple[DatasetSelection, ...] = self._selection
        narrowed = any(item.document_ids for item in selection)
        # A selection confirmed moments ago is not checked again; RAGFlow still checks
        # that the datasets own the documents when it retrieves.
        if narrowed and not (self._memory is not None and self._memory.recalls(selection)):
            selection = validate_documents(session, selection)
            if self._memory is not None:
                self._memory.remember(self._selection)
        return [(visible[item.dataset_id], item.document_ids) for item in selection]

    def _retrieve(
        self,
        session: ProviderSession,
        query: str,
        dataset_ids: list[str],
        document_ids: list[str],
        page_size: int,
        datasets: list[Dataset],
    ) -> list[RetrievalHit]:
        body: dict[str, Any] = {
            "question": query,
            "dataset_ids": dataset_ids,
            "page": 1,
            "page_size": page_size,
            "top_k": CANDIDATE_POOL,
            "highlight": False,
        }
        if document_ids:
            body["document_ids"] = document_ids
        reply = session.post("/api/v1/retrieval", json_body=body, action="retrieval request")
        data = ragflow_data(reply, action="retrieval request")
        if not isinstance(data, dict) or not isinstance(data.get("chunks", []), list):
            raise MalformedResponseError("RAGFlow's retrieval answer has no 'chunks' list.")
        names = {dataset.id: dataset.name for dataset in datasets if dataset.name}
        titles = titles_from_doc_aggs(data.get("doc_aggs"))
        hits = []
        for chunk in data.get("chunks", []):
            if isinstance(chunk, dict):
                hit = chunk_hit(chunk, dataset_names=names, doc_titles=titles)
                if hit is not None:
                    hits.append(hit)
        return hits


def _groups(targets: list[tuple[Dataset, tuple[str, ...]]]) -> list[tuple[list[str], list[str]]]:
    """One retrieval call per embedding model, and per whole-vs-narrowed datasets.

    RAGFlow refuses to search datasets with different embedding models together,
    and ``document_ids`` narrows every dataset in a call, so whole datasets and
    datasets narrowed to documents are searched in separate calls.
    """
    groups: dict[tuple[str, bool], tuple[list[str], list[str]]] = {}
    for dataset, document_ids in targets:
        dataset_ids, documents = groups.setdefault((dataset.embedding_model, bool(document_ids)), ([], []))
        dataset_ids.append(dataset.id)
        documents.extend(document_ids)
    return list(groups.values())
