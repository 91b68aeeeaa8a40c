"""Which adapter serves which binding: ``binding.provider`` -> a provider factory.

The ``local`` provider is imported lazily, so nothing here needs the library app
until a local binding is actually used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.conf import settings

from knowledgeweb.bindings.choices import BindingProvider
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.knowledge import KnowledgeCapabilities, RetrievalProvider
from knowledgeweb.providers import lightrag, ragflow
from knowledgeweb.providers.ragflow import DatasetSelection


@dataclass(frozen=True)
class ProviderRequest:
    """What a factory needs beyond the binding: the credential read at use, the scope, the mode."""

    api_key: str | None
    selection: tuple[DatasetSelection, ...] | None
    #: The LightRAG query mode this search runs in (``None``: the adapter's default).
    mode: str | None = None


def provider_timeout(binding: KnowledgeBinding) -> float:
    """The binding's timeout, never above the ceiling (the binding rules refuse one above it anyway)."""
    return float(min(binding.timeout, settings.KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING))


ProviderFactory = Callable[[KnowledgeBinding, ProviderRequest], RetrievalProvider]


def _ragflow(binding: KnowledgeBinding, request: ProviderRequest) -> RetrievalProvider:
    from knowledgeweb.retrieval.selections import CachedSelectionMemory

    api_key = request.api_key or ""
    connection = ragflow.ragflow_connection(
        base_url=binding.base_url, api_key=api_key, timeout=provider_timeout(binding)
    )
    memory = CachedSelectionMemory(binding=binding, api_key=api_key)
    return ragflow.RagflowProvider(connection=connection, selection=request.selection, memory=memory)


def _lightrag(binding: KnowledgeBinding, request: ProviderRequest) -> RetrievalProvider:
    connection = lightrag.lightrag_connection(
        base_url=binding.base_url, api_key=request.api_key or "", timeout=provider_timeout(binding)
    )
    return lightrag.LightragProvider(connection=connection, mode=request.mode)


def _local(binding: KnowledgeBinding, request: ProviderRequest) -> RetrievalProvider:
    from knowledgeweb.library.provider import LocalProvider

    # A selected scope names collections by id (bindings.rules.local_selection_problems).
    ids = None if request.selection is None else [int(item.dataset_id) for item in request.selection]
    return LocalProvider(top_k=binding.top_k, collection_ids=ids)


FACTORIES: dict[str, ProviderFactory] = {
    BindingProvider.RAGFLOW: _ragflow,
    BindingProvider.LIGHTRAG: _lightrag,
    BindingProvider.LOCAL: _local,
}


def provider_for(binding: KnowledgeBinding, request: ProviderRequest) -> RetrievalProvider:
    """The adapter for ``binding``; raises ``KeyError`` for a provider with no factory."""
    return FACTORIES[binding.provider](binding, request)


def provider_capabilities(provider: str) -> Sequence[KnowledgeCapabilities]:
    """What a provider offers, without a credential or a request."""
    if provider == BindingProvider.RAGFLOW:
        return ragflow.CAPABILITIES
    if provider == BindingProvider.LIGHTRAG:
        return lightrag.CAPABILITIES
    if provider == BindingProvider.LOCAL:
        from knowledgeweb.library.provider import LocalProvider

        return LocalProvider().capabilities()
    return ()
