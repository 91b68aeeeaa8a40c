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
    # The selection memory lives in Django's cache, so it is imported only when a search runs.
    from knowledgeweb.retrieval.selections import CachedSelectionMemory

    api_key = request.api_key or ""
    connection = ragflow_connection(base_url=binding.base_url, api_key=api_key, timeout=request.timeout)
    memory = CachedSelectionMemory(binding=binding, api_key=api_key)
    return RagflowProvider(connection=connection, selection=request.selection, memory=memory)


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
