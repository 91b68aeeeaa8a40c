"""Write side of bindings."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from knowledgeweb.bindings.choices import BindingScope
from knowledgeweb.bindings.models import KnowledgeBinding


@transaction.atomic
def binding_create(
    *,
    name: str,
    provider: str,
    tools: Sequence[str],
    base_url: str = "",
    api_key_env: str = "",
    users: Iterable[User] = (),
    agent_names: Sequence[str] = (),
    browser_use: bool = False,
    top_k: int = 20,
    timeout: int = 30,
    scope: str = BindingScope.ALL,
    selection: Sequence[dict[str, Any]] = (),
    enabled: bool = True,
    query_modes: Sequence[str] = (),
    default_mode: str = "",
) -> KnowledgeBinding:
    """Create a binding; raises ``ValidationError`` (per field) when any rule fails."""
    binding = KnowledgeBinding(
        name=name,
        provider=provider,
        base_url=base_url,
        api_key_env=api_key_env,
        agent_names=list(agent_names),
        browser_use=browser_use,
        tools=list(tools),
        top_k=top_k,
        timeout=timeout,
        scope=scope,
        selection=list(selection),
        enabled=enabled,
        query_modes=list(query_modes),
        default_mode=default_mode,
    )
    binding.full_clean()
    binding.save()
    binding.users.set(list(users))
    return binding
