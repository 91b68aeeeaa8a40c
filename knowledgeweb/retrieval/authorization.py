"""Who may run which tool through which binding (docs/providers.md#bindings).

Exact user, exact agent name when the binding lists any (or none, from the browser, when
the binding is usable there), tool enabled, scope not
disabled, the binding's rules re-checked at use, and the credential present.
Everything here happens before a provider is even built.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User

from knowledgeweb.bindings.access import agent_may_use
from knowledgeweb.bindings.choices import BindingScope, BindingTool
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.rules import binding_problems
from knowledgeweb.bindings.selectors import binding_get_by_name, binding_list_enabled_for_user
from knowledgeweb.providers.credentials import credential_from_environment
from knowledgeweb.providers.errors import MissingCredentialError
from knowledgeweb.providers.registry import provider_is_remote
from knowledgeweb.retrieval.errors import RetrievalInvalidError, RetrievalRefusedError


@dataclass(frozen=True)
class Authorized:
    binding: KnowledgeBinding
    #: The credential value, read from the environment at use (``None`` for ``local``).
    api_key: str | None


def binding_authorize(*, user: User, agent_name: str, tool: str, binding_name: str | None) -> Authorized:
    """The binding this call may use, with its credential; raise a clear refusal otherwise."""
    if tool not in BindingTool.values:
        raise RetrievalInvalidError(
            f"Unknown tool {tool!r}; expected one of {', '.join(BindingTool.values)}."
        )
    binding = _named(user, binding_name) if binding_name else _only_candidate(user, agent_name, tool)
    refusal = _refusal(binding, agent_name, tool)
    if refusal:
        raise RetrievalRefusedError(refusal)
    problems = binding_problems(**binding.rule_fields())
    if problems:
        summary = "; ".join(f"{field}: {' '.join(messages)}" for field, messages in problems.items())
        raise RetrievalRefusedError(
            f"Binding '{binding.name}' is misconfigured and was not used ({summary}). Ask an admin to fix it.",
            code="binding_misconfigured",
        )
    if not provider_is_remote(binding.provider):
        return Authorized(binding=binding, api_key=None)
    try:
        api_key = credential_from_environment(binding.api_key_env)
    except MissingCredentialError as exc:
        raise RetrievalRefusedError(
            f"Binding '{binding.name}' cannot be used: {exc}", code="credential_missing"
        ) from None
    return Authorized(binding=binding, api_key=api_key)


def binding_refusal(binding: KnowledgeBinding, *, agent_name: str, tool: str) -> str | None:
    """Why this (enabled, bound) binding may not run ``tool`` for ``agent_name``; ``None`` if it may."""
    return _refusal(binding, agent_name, tool)


def _named(user: User, name: str) -> KnowledgeBinding:
    binding = binding_get_by_name(name=name)
    # A binding that exists but is not yours reads exactly like one that does not exist.
    if binding is None or not binding.users.filter(pk=user.pk).exists():
        raise RetrievalRefusedError(
            f"No binding named '{name}' is available to you.", code="binding_unavailable"
        )
    return binding


def _only_candidate(user: User, agent_name: str, tool: str) -> KnowledgeBinding:
    candidates = [
        b for b in binding_list_enabled_for_user(user=user) if _refusal(b, agent_name, tool) is None
    ]
    if not candidates:
        who = f" for agent '{agent_name}'" if agent_name else ""
        raise RetrievalRefusedError(f"No binding offers {tool} to you{who}.", code="binding_unavailable")
    if len(candidates) > 1:
        # One binding per request: providers share no resource-id namespace, so
        # results and selections from different bindings are never combined.
        names = ", ".join(f"'{b.name}'" for b in candidates)
        raise RetrievalInvalidError(
            f"Several bindings offer {tool} to you ({names}); name one with 'binding'.",
            code="binding_ambiguous",
        )
    return candidates[0]


def _refusal(binding: KnowledgeBinding, agent_name: str, tool: str) -> str | None:
    if not binding.enabled:
        return f"Binding '{binding.name}' is disabled."
    if binding.scope == BindingScope.DISABLED:
        return f"Binding '{binding.name}' has its scope disabled; it runs no searches."
    if not isinstance(binding.agent_names, list):
        return f"Binding '{binding.name}' has malformed agent names and was not used."
    if not agent_may_use(
        agent_names=binding.agent_names, browser_use=binding.browser_use, agent_name=agent_name
    ):
        return f"Binding '{binding.name}' is not available to agent '{agent_name}'."
    if not isinstance(binding.tools, list) or tool not in binding.tools:
        return f"Binding '{binding.name}' does not offer the tool {tool}."
    return None
