"""Read side of bindings."""

from __future__ import annotations

import os

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet

from knowledgeweb.bindings.models import KnowledgeBinding


def binding_list_for_user(*, user: User | AnonymousUser) -> QuerySet[KnowledgeBinding]:
    """Enabled bindings that name ``user`` exactly. An anonymous user has none."""
    if not user.is_authenticated:
        return KnowledgeBinding.objects.none()
    return KnowledgeBinding.objects.filter(enabled=True, users=user).order_by("name")


def binding_get_by_name(*, name: str) -> KnowledgeBinding | None:
    return KnowledgeBinding.objects.filter(name=name).first()


def binding_credential_is_set(*, binding: KnowledgeBinding) -> bool:
    """Whether the binding's environment variable holds a value (the value is never returned)."""
    return bool(binding.api_key_env and (os.environ.get(binding.api_key_env) or "").strip())
