"""What a caller may use: each (binding, tool) pair with its operations."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User

from knowledgeweb.bindings.rules import binding_problems
from knowledgeweb.bindings.selectors import binding_credential_is_set, binding_list_enabled_for_user
from knowledgeweb.providers.registry import provider_is_remote
from knowledgeweb.retrieval.authorization import binding_refusal
from knowledgeweb.retrieval.modes import mode_choices, mode_default
from knowledgeweb.retrieval.registry import provider_capabilities


@dataclass(frozen=True)
class BindingCapability:
    binding: str
    provider: str
    tool: str
    operations: tuple[str, ...]
    scope: str
    top_k: int
    #: A provider with query modes (LightRAG): the modes a search of this tool may name, and the one used when it names none.
    query_modes: tuple[str, ...] = ()
    default_mode: str | None = None


def retrieval_capabilities(*, user: User, agent_name: str) -> list[BindingCapability]:
    """Every tool the caller could run right now, per binding, in binding-name order.

    A binding that would be refused at use (wrong agent, disabled scope, broken
    configuration, unset credential) is left out rather than advertised.
    """
    offered: list[BindingCapability] = []
    for binding in binding_list_enabled_for_user(user=user):
        if binding_problems(**binding.rule_fields()):
            continue
        if provider_is_remote(binding.provider) and not binding_credential_is_set(binding=binding):
            continue
        for capability in provider_capabilities(binding.provider):
            if binding_refusal(binding, agent_name=agent_name, tool=capability.tool) is None:
                offered.append(
                    BindingCapability(
                        binding=binding.name,
                        provider=binding.provider,
                        tool=capability.tool,
                        operations=tuple(capability.operations),
                        scope=binding.scope,
                        top_k=binding.top_k,
                        query_modes=mode_choices(binding, capability.tool),
                        default_mode=mode_default(binding, capability.tool),
                    )
                )
    return offered
