"""LightRAG as the registry sees it: a remote graph search with query modes and no selections."""

from __future__ import annotations

from typing import Any

from knowledgeweb.knowledge import RetrievalProvider
from knowledgeweb.providers.lightrag.adapter import (
    CAPABILITIES,
    DEFAULT_MODES,
    QUERY_MODES,
    TOOL_MODES,
    LightragProvider,
    lightrag_connection,
)
from knowledgeweb.providers.lightrag.probe import lightrag_probe
from knowledgeweb.providers.spec import ModeSpec, ProviderRequest, ProviderSpec


def _factory(binding: Any, request: ProviderRequest) -> RetrievalProvider:
    connection = lightrag_connection(
        base_url=binding.base_url, api_key=request.api_key or "", timeout=request.timeout
    )
    return LightragProvider(connection=connection, mode=request.mode)


SPEC = ProviderSpec(
    name="lightrag",
    label="LightRAG",
    remote=True,
    tools=tuple(capability.tool for capability in CAPABILITIES),
    capabilities=lambda: CAPABILITIES,
    factory=_factory,
    probe=lightrag_probe,
    modes=ModeSpec(
        query_modes=QUERY_MODES,
        tool_modes=TOOL_MODES,
        default_modes=DEFAULT_MODES,
        unknown_note="(bypass retrieves nothing, so it yields no evidence and is not offered)",
        usual_default="mix (documents) and hybrid (relations)",
        usual_choice="(LightRAG's usual: mix for documents, hybrid for relations)",
    ),
)
