"""The knowledge contract core (docs/contract.md).

What a source is, how its id is computed, how evidence is formatted under a
budget, and how a reader decides that evidence is genuine. Pure Python and
pydantic: this package must never import Django or httpx.
"""

from knowledgeweb.knowledge.accumulation import SourceAccumulator
from knowledgeweb.knowledge.budget import enforce_output_budget
from knowledgeweb.knowledge.citations import Citation, classify_href, contains_handle
from knowledgeweb.knowledge.delegation import forward_sources
from knowledgeweb.knowledge.formatting import FormattedResult, format_result, format_result_view
from knowledgeweb.knowledge.ids import native_handle, shared_handle, source_id
from knowledgeweb.knowledge.linkgrammar import find_citations, nesting_exceeded, parse_markdown
from knowledgeweb.knowledge.reading import claimed_handles, read_signed_sources, read_sources
from knowledgeweb.knowledge.reserved import RESERVED_KEYS, strip_reserved_keys
from knowledgeweb.knowledge.types import (
    Evidence,
    KnowledgeCapabilities,
    KnowledgeSource,
    RagflowLocator,
    RetrievalHit,
    RetrievalProvider,
    RetrievalResult,
)

__all__ = [
    "RESERVED_KEYS",
    "Citation",
    "Evidence",
    "FormattedResult",
    "KnowledgeCapabilities",
    "KnowledgeSource",
    "RagflowLocator",
    "RetrievalHit",
    "RetrievalProvider",
    "RetrievalResult",
    "SourceAccumulator",
    "claimed_handles",
    "classify_href",
    "contains_handle",
    "enforce_output_budget",
    "find_citations",
    "format_result",
    "format_result_view",
    "forward_sources",
    "native_handle",
    "nesting_exceeded",
    "parse_markdown",
    "read_signed_sources",
    "read_sources",
    "shared_handle",
    "source_id",
    "strip_reserved_keys",
]
