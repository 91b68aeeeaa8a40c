"""LightRAG adapter: document search and entity relations over ``/query/data``."""

from knowledgeweb.providers.lightrag.adapter import CAPABILITIES, LightragProvider, lightrag_connection

__all__ = ["CAPABILITIES", "LightragProvider", "lightrag_connection"]
