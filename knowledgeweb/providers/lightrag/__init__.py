"""LightRAG adapter: document search and entity relations over ``/query/data``."""

from knowledgeweb.providers.lightrag.adapter import (
    CAPABILITIES,
    DEFAULT_MODES,
    QUERY_MODES,
    TOOL_MODES,
    LightragProvider,
    lightrag_connection,
)

__all__ = [
    "CAPABILITIES",
    "DEFAULT_MODES",
    "QUERY_MODES",
    "TOOL_MODES",
    "LightragProvider",
    "lightrag_connection",
]
