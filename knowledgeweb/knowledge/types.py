"""The contract's value types (docs/contract.md).

Pure Python and pydantic: nothing here may import Django or httpx.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

#: The capability operations a tool may advertise (docs/contract.md).
Operation = Literal[
    "search", "sources", "catalog", "documents", "dataset_filter", "document_filter", "relations_search"
]

HitKind = Literal["document", "entity", "relation"]


class RagflowLocator(BaseModel):
    """RAGFlow's own identifiers for a chunk; complete locators allow the native snapshot."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dataset_id: str
    document_id: str
    chunk_id: str
    pages: tuple[int, ...] = ()


class RetrievalHit(BaseModel):
    """One retrieved item as a provider adapter maps it.

    ``kind="document"`` hits with a ``title`` become cited evidence. A document hit
    without a title is unattributed: usable text, never a citation. Entity and
    relation hits are graph facts and are never cited; a relation names, in
    ``evidence``, the 1-based positions of the document hits that support it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    kind: HitKind = "document"
    title: str | None = None
    dataset_name: str | None = None
    url: str | None = None
    page: int | None = None
    score: float | None = None
    locator: RagflowLocator | None = None
    # Graph facts only.
    entity_type: str | None = None
    source_entity: str | None = None
    target_entity: str | None = None
    evidence: tuple[int, ...] = ()


class RetrievalResult(BaseModel):
    """What one provider call returned, before formatting."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str
    query: str
    hits: tuple[RetrievalHit, ...] = ()
    tool: str = "knowledge_search"


class KnowledgeCapabilities(BaseModel):
    """What a tool advertises. Search support implies none of the other operations."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str
    tool: str
    operations: tuple[Operation, ...] = Field(default=("search", "sources"))


class KnowledgeSource(BaseModel):
    """A shared source record, version 1 (docs/contract.md#source-records). Bounds are checked by the reader."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    provider: str
    title: str
    excerpt: str
    dataset_name: str | None = None
    url: str | None = None
    page: int | None = None


@dataclass(frozen=True, slots=True)
class Evidence:
    """A validated source, in either form, as readers and the viewer use it.

    ``handle`` is the fragment a citation points at, without ``#``:
    ``knowledge-source-<id>`` for shared records, ``knowledge-<id>`` (where the id
    ends in ``-N``) for native RAGFlow records. ``truncated`` comes from the native
    record's flag; for shared records it is true when the excerpt ends with the
    ellipsis that ``format_result`` appends when it shortens text.
    """

    handle: str
    form: Literal["shared", "native"]
    id: str
    provider: str
    title: str
    excerpt: str
    dataset_name: str | None = None
    url: str | None = None
    pages: tuple[int, ...] = ()
    truncated: bool = False
    # Native records keep RAGFlow's locators; shared records never carry them.
    locators: dict[str, str] = field(default_factory=dict)

    @property
    def page(self) -> int | None:
        return self.pages[0] if self.pages else None

    def __reduce__(self) -> tuple[type[Evidence], tuple[object, ...]]:
        # Validated evidence is memoized in a shared cache; rebuilding through the
        # constructor unpickles about twice as fast as the slots dataclass default.
        return (
            Evidence,
            (
                self.handle,
                self.form,
                self.id,
                self.provider,
                self.title,
                self.excerpt,
                self.dataset_name,
                self.url,
                self.pages,
                self.truncated,
                self.locators,
            ),
        )


@runtime_checkable
class RetrievalProvider(Protocol):
    """A search-only provider adapter."""

    def capabilities(self) -> Sequence[KnowledgeCapabilities]:
        """The tools this provider offers, with their operations."""
        ...

    def search(self, query: str, *, tool: str = "knowledge_search", top_k: int = 20) -> RetrievalResult:
        """Run one retrieval. Raises ``ProviderError`` (a subclass) on failure."""
        ...
