"""Which adapter serves which binding: the provider registry's factory for ``binding.provider``.

Every provider-specific part lives in its folder under ``knowledgeweb/providers``
behind ``providers/registry.py``; this module only adds what Django knows (the
configured timeout ceiling).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.knowledge import KnowledgeCapabilities, RetrievalProvider
from knowledgeweb.providers.registry import provider_spec
from knowledgeweb.providers.spec import ProviderRequest

__all__ = ["ProviderRequest", "provider_capabilities", "provider_for", "provider_timeout"]


def provider_timeout(binding: KnowledgeBinding) -> float:
    """The binding's timeout, never above the ceiling (the binding rules refuse one above it anyway)."""
    return float(min(binding.timeout, settings.KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING))


def provider_for(binding: KnowledgeBinding, request: ProviderRequest) -> RetrievalProvider:
    """The adapter for ``binding``; raises ``KeyError`` for a provider the registry does not know."""
    spec = provider_spec(binding.provider)
    if spec is None:
        raise KeyError(binding.provider)
    return spec.factory(binding, request)


def provider_capabilities(provider: str) -> Sequence[KnowledgeCapabilities]:
    """What a provider offers, without a credential or a request."""
    spec = provider_spec(provider)
    return spec.capabilities() if spec is not None else ()
