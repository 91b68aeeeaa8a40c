"""Read side of bindings."""

from __future__ import annotations

import os

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet

from knowledgeweb.bindings.choices import BindingScope
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.rules import binding_problems
from knowledgeweb.ops.prepared import PreparedQuery
from knowledgeweb.providers.credentials import key_env_problem


def _enabled_for(*, user_id: int) -> QuerySet[KnowledgeBinding]:
    return KnowledgeBinding.objects.filter(enabled=True, users=user_id).order_by("name")


# Every search reads this list; compiled once, it costs a fraction of the queryset's
# construction (knowledgeweb/ops/prepared.py).
_ENABLED_FOR = PreparedQuery(_enabled_for, placeholders={"user_id": -20_260_101})


def binding_list_for_user(*, user: User | AnonymousUser) -> QuerySet[KnowledgeBinding]:
    """Enabled bindings that name ``user`` exactly. An anonymous user has none."""
    if not user.is_authenticated:
        return KnowledgeBinding.objects.none()
    return _enabled_for(user_id=user.pk)


def binding_list_enabled_for_user(*, user: User | AnonymousUser) -> list[KnowledgeBinding]:
    """``binding_list_for_user`` as a list, read by one query compiled once per process."""
    if not user.is_authenticated:
        return []
    return _ENABLED_FOR.run(user_id=user.pk)


def binding_list_usable(*, user: User | AnonymousUser, provider: str, tool: str) -> list[KnowledgeBinding]:
    """What bindings allow ``user`` with ``provider``'s ``tool``: the enabled bindings naming the
    user that offer the tool, with a scope other than disabled, and that pass the binding rules.

    By name. A binding saved before a rule tightened (or edited outside the admin) allows
    nothing until it is fixed, as a search through it would be refused.
    """
    usable: list[KnowledgeBinding] = []
    for binding in binding_list_for_user(user=user).filter(provider=provider):
        if binding.scope == BindingScope.DISABLED or binding_problems(**binding.rule_fields()):
            continue
        if not isinstance(binding.tools, list) or tool not in binding.tools:
            continue
        usable.append(binding)
    return usable


def binding_get_by_name(*, name: str) -> KnowledgeBinding | None:
    return KnowledgeBinding.objects.filter(name=name).first()


def binding_credential_is_set(*, binding: KnowledgeBinding) -> bool:
    """Whether the binding's environment variable holds a value (the value is never returned).

    A variable without the key prefix is never read, not even to say whether it is set.
    """
    if not binding.api_key_env or key_env_problem(binding.api_key_env) is not None:
        return False
    return bool((os.environ.get(binding.api_key_env) or "").strip())


def binding_list_key_env_refused() -> list[KnowledgeBinding]:
    """Bindings whose key variable the rules refuse (saved before the prefix was required)."""
    named = KnowledgeBinding.objects.exclude(api_key_env="").order_by("name")
    return [binding for binding in named if key_env_problem(binding.api_key_env) is not None]
