"""The ``local`` provider: the embedded index as a ``RetrievalProvider`` (docs/providers.md).

Hits carry the document title, the collection as ``dataset_name``, a URL only
when the document has a real http(s) source URL, and a page only when the chunk
came from a real PDF page.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from django.db import DatabaseError

from knowledgeweb.knowledge import KnowledgeCapabilities, RetrievalResult
from knowledgeweb.library.extraction import MAX_PDF_PAGE, public_url
from knowledgeweb.library.search import ChunkHit, SearchUnavailableError
from knowledgeweb.library.selectors import chunk_search, collection_names_for_ids
from knowledgeweb.providers.errors import ProviderUnavailableError, UnsupportedToolError

PROVIDER = "local"
TOOL = "knowledge_search"
MAX_TOP_K = 100


class LocalProvider:
    """Searches the app's own database; needs no URL and no credential."""

    def __init__(
        self,
        *,
        top_k: int = 20,
        collection_names: Sequence[str] | None = None,
        collection_ids: Iterable[int] | None = None,
    ) -> None:
        self.top_k = top_k
        # None searches every collection; both given means collections named AND selected.
        self.collection_names = None if collection_names is None else tuple(collection_names)
        # A binding's selection, by id (docs/decisions/0006-per-collection-access-for-the-local-index.md): resolved at each search,
        # so a renamed collection stays selected and a deleted one is simply not searched.
        self.collection_ids = None if collection_ids is None else frozenset(collection_ids)

    def capabilities(self) -> Sequence[KnowledgeCapabilities]:
        return (KnowledgeCapabilities(provider=PROVIDER, tool=TOOL, operations=("search", "sources")),)

    def search(self, query: str, *, tool: str = TOOL, top_k: int | None = None) -> RetrievalResult:
        if tool != TOOL:
            raise UnsupportedToolError(f"The local index offers only the {TOOL} tool, not {tool!r}.")
        limit = max(1, min(top_k if top_k is not None else self.top_k, MAX_TOP_K))
        try:
            names: Sequence[str] | None = self.collection_names
            if self.collection_ids is not None:
                selected = collection_names_for_ids(ids=self.collection_ids)
                names = selected if names is None else [n for n in names if n in set(selected)]
            rows = chunk_search(query=query, limit=limit, collection_names=names)
        except (DatabaseError, SearchUnavailableError) as exc:
            raise ProviderUnavailableError(f"The local index could not be searched: {exc}") from exc
        # One validation of the whole result builds every RetrievalHit in pydantic's core:
        # a RetrievalHit(...) call per hit added about 12 us to a 20-hit search (4% of one
        # on a 1k-chunk index), the Python side of pydantic's __init__ each time.
        return RetrievalResult.model_validate(
            {"provider": PROVIDER, "query": query, "tool": TOOL, "hits": list(map(_hit, rows))}
        )


def _hit(row: ChunkHit) -> dict[str, Any]:
    """The fields of one ``RetrievalHit``."""
    page = row.page if row.page is not None and 1 <= row.page <= MAX_PDF_PAGE else None
    return {
        "text": row.text,
        "title": row.title,
        "dataset_name": row.collection_name,
        "url": _url(row.source_url),
        "page": page,
        "score": row.score,
    }


@lru_cache(maxsize=1024)
def _url(source_url: str) -> str | None:
    # The hits of one search share few documents, and URLValidator's regular expressions
    # cost microseconds per call: each distinct stored URL is checked once (public_url is
    # pure, so a cached answer is the same answer).
    return public_url(source_url) or None
