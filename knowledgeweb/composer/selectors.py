"""Which answer models a user (and agent name) may compose with."""

from __future__ import annotations

import os

from django.contrib.auth.models import AnonymousUser, User

from knowledgeweb.bindings.access import agent_may_use
from knowledgeweb.composer.errors import ModelError, ModelFault
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.composer.rules import answer_model_problems


def answer_models_for(*, user: User | AnonymousUser, agent_name: str) -> list[AnswerModel]:
    """Enabled models that name ``user`` exactly and, when they list agent names, ``agent_name``
    (or no agent name, from the browser, when the model is usable there)."""
    if not user.is_authenticated:
        return []
    models = AnswerModel.objects.filter(enabled=True, users=user).order_by("name")
    return [
        m
        for m in models
        if agent_may_use(agent_names=m.agent_names, browser_use=m.browser_use, agent_name=agent_name)
    ]


def answer_model_get(*, user: User | AnonymousUser, agent_name: str, name: str) -> AnswerModel | None:
    """The named model if this user and agent may use it (another user's model reads as missing)."""
    for model in answer_models_for(user=user, agent_name=agent_name):
        if model.name == name:
            return model
    return None


def answer_model_key(model: AnswerModel) -> str:
    """The key read from the environment at use ('' when the model names no variable).

    Rules are checked again here: a model edited directly in the database must not
    read SECRET_KEY or carry a bad URL.
    """
    problems = answer_model_problems(**model.rule_fields())
    if problems:
        summary = "; ".join(f"{field}: {' '.join(messages)}" for field, messages in problems.items())
        raise ModelError(
            ModelFault.MISCONFIGURED,
            f"Answer model '{model.name}' is misconfigured and was not used ({summary}). Ask an admin to fix it.",
        )
    if not model.api_key_env:
        return ""
    key = (os.environ.get(model.api_key_env) or "").strip()
    if not key:
        raise ModelError(
            ModelFault.MISCONFIGURED,
            f"The environment variable {model.api_key_env} that holds answer model '{model.name}''s key is not "
            "set; no request was sent.",
        )
    return key
