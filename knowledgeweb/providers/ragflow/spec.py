"""RAGFlow as the registry sees it: a remote document search whose scope a search may narrow."""

from __future__ import annotations

from typing import Any

from knowledgeweb.knowledge import RetrievalProvider
from knowledgeweb.providers.ragflow import scope
from knowledgeweb.providers.ragflow.adapter import CAPABILITIES, RagflowProvider, ragflow_connection
from knowledgeweb.providers.ragflow.probe import ragflow_probe
from knowledgeweb.providers.selection import DatasetSelection
from knowledgeweb.providers.spec import ProviderRequest, ProviderSpec


def _selection_problems(selection: tuple[DatasetSelection, ...]) -> list[str]:
    # Looked up at call time, so the rules stay in one place (scope.selection_problems).
    return scope.selection_problems(selection)


def _factory(binding: Any, request: ProviderRequest) -> RetrievalProvider:
    # The selection memory (kept in Django's cache, above this layer) comes with the request.
    connection = ragflow_connection(
        base_url=binding.base_url, api_key=request.api_key or "", timeout=request.timeout
    )
    return RagflowProvider(connection=connection, selection=request.selection, memory=request.memory)


SPEC = ProviderSpec(
    name="ragflow",
    label="RAGFlow",
    remote=True,
    tools=tuple(capability.tool for capability in CAPABILITIES),
    capabilities=lambda: CAPABILITIES,
    factory=_factory,
    selection_problems=_selection_problems,
    selection_noun="RAGFlow datasets and documents",
    narrowable=True,
    probe=ragflow_probe,
)
