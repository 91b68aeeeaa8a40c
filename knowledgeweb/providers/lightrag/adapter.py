"""LightRAG adapter: ``knowledge_search`` and ``entity_relations_search`` over ``POST /query/data``."""

from __future__ import annotations

from collections.abc import Sequence

from knowledgeweb.knowledge.types import KnowledgeCapabilities, RetrievalHit, RetrievalResult
from knowledgeweb.providers.client import Connection, ProviderSession
from knowledgeweb.providers.errors import ProviderConfigurationError, UnsupportedToolError
from knowledgeweb.providers.lightrag.documents import document_hits
from knowledgeweb.providers.lightrag.relations import relation_hits
from knowledgeweb.providers.lightrag.replies import lightrag_data

PROVIDER = "lightrag"
DOCUMENT_TOOL = "knowledge_search"
RELATIONS_TOOL = "entity_relations_search"
#: LightRAG accepts ``top_k`` and ``chunk_top_k`` in 1..1000; the contract shows at most 100.
MAX_TOP_K = 100

#: LightRAG's retrieval modes (docs/providers.md). ``bypass`` is not among them: it sends
#: the query straight to the model and retrieves nothing, so it yields no evidence.
QUERY_MODES = ("naive", "local", "global", "hybrid", "mix")
#: ``naive`` searches chunks only and returns no entities or relationships, so it
#: cannot serve entity relations.
TOOL_MODES = {DOCUMENT_TOOL: QUERY_MODES, RELATIONS_TOOL: ("local", "global", "hybrid", "mix")}
#: The modes used when neither the binding nor the search names one.
DEFAULT_MODES = {DOCUMENT_TOOL: "mix", RELATIONS_TOOL: "hybrid"}

CAPABILITIES = (
    KnowledgeCapabilities(provider=PROVIDER, tool=DOCUMENT_TOOL, operations=("search", "sources")),
    KnowledgeCapabilities(
        provider=PROVIDER, tool=RELATIONS_TOOL, operations=("search", "sources", "relations_search")
    ),
)


def lightrag_connection(*, base_url: str, api_key: str, timeout: float) -> Connection:
    """LightRAG authenticates with ``X-API-Key: <key>``."""
    return Connection(
        label="LightRAG",
        base_url=base_url,
        timeout=timeout,
        headers={"X-API-Key": api_key},
        secrets=(api_key,),
    )


class LightragProvider:
    """Searches the LightRAG workspace the key is bound to. Its scope is always the whole workspace.

    ``mode`` is the query mode the retrieval service chose for this search (the
    search's own, the binding's default, or ``DEFAULT_MODES``); ``None`` means the default.
    """

    def __init__(self, *, connection: Connection, mode: str | None = None) -> None:
        self._connection = connection
        self._mode = mode

    def capabilities(self) -> Sequence[KnowledgeCapabilities]:
        return CAPABILITIES

    def search(self, query: str, *, tool: str = DOCUMENT_TOOL, top_k: int = 20) -> RetrievalResult:
        if tool not in TOOL_MODES:
            raise UnsupportedToolError(f"LightRAG offers {DOCUMENT_TOOL} and {RELATIONS_TOOL}, not {tool}.")
        mode = self._mode or DEFAULT_MODES[tool]
        if mode not in TOOL_MODES[tool]:
            raise ProviderConfigurationError(
                f"LightRAG's {tool} cannot run in mode {mode!r}; it takes one of "
                f"{', '.join(TOOL_MODES[tool])}. No request was sent."
            )
        limit = max(1, min(top_k, MAX_TOP_K))
        body = {"query": query, "mode": mode, "top_k": limit, "chunk_top_k": limit}
        with ProviderSession(self._connection) as session:
            data = lightrag_data(session.post("/query/data", json_body=body, action=f"{mode} query"))
        hits: list[RetrievalHit] = []
        if data is not None:
            hits = (
                relation_hits(data, top_k=limit)
                if tool == RELATIONS_TOOL
                else document_hits(data, top_k=limit)
            )
        return RetrievalResult(provider=PROVIDER, query=query, hits=tuple(hits), tool=tool)
