"""The closed vocabularies a binding is written in."""

from __future__ import annotations

from django.db import models

from knowledgeweb.providers.registry import provider_specs


def provider_choices() -> list[tuple[str, str]]:
    """The choices of ``KnowledgeBinding.provider``: the registry's names and labels, in its order.

    A callable, read when the choices are used rather than when the model is defined: a
    provider registered from its app's ``ready()`` (the local index) is registered after the
    models are imported. A new provider needs a choices-only migration (``manage.py
    makemigrations``), nothing else.
    """
    return [(spec.name, spec.label) for spec in provider_specs()]


class BindingTool(models.TextChoices):
    KNOWLEDGE_SEARCH = "knowledge_search", "knowledge_search (document search)"
    ENTITY_RELATIONS_SEARCH = "entity_relations_search", "entity_relations_search (LightRAG only)"


class BindingScope(models.TextChoices):
    ALL = "all", "All (everything the credential can see)"
    DISABLED = "disabled", "Disabled (no searches)"
    SELECTED = "selected", "Selected: RAGFlow datasets and documents, or local collections"
