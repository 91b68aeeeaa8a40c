"""The local index as the registry sees it: built in, no credential, whole collections selected.

The index is this app, above the providers layer, so the providers layer never
imports it: ``LibraryConfig.ready()`` registers this spec (``provider_register``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from knowledgeweb.knowledge import KnowledgeCapabilities, RetrievalProvider
from knowledgeweb.library.provider import LocalProvider
from knowledgeweb.providers.local.selection import NAME, local_selection_problems
from knowledgeweb.providers.spec import ProviderRequest, ProviderSpec


def _capabilities() -> Sequence[KnowledgeCapabilities]:
    return LocalProvider().capabilities()


def _factory(binding: Any, request: ProviderRequest) -> RetrievalProvider:
    # A selected scope names collections by id (local_selection_problems).
    ids = None if request.selection is None else [int(item.dataset_id) for item in request.selection]
    return LocalProvider(top_k=binding.top_k, collection_ids=ids)


SPEC = ProviderSpec(
    name=NAME,
    label="Local index (embedded)",
    remote=False,
    tools=("knowledge_search",),
    capabilities=_capabilities,
    factory=_factory,
    selection_problems=local_selection_problems,
    selection_noun="local collections",
    form_hooks="knowledgeweb.library.binding_form:HOOKS",
)
