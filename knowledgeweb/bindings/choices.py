"""The closed vocabularies a binding is written in."""

from __future__ import annotations

from django.db import models

from knowledgeweb.providers.registry import provider_specs


def _provider_choices() -> type[models.TextChoices]:
    # Built from the registry, so adding a provider is its folder plus one registry line.
    # The values and labels are the model field's choices: a new provider needs a
    # choices-only migration (``manage.py makemigrations``), nothing else.
    members = [(spec.name.upper(), (spec.name, spec.label)) for spec in provider_specs()]
    return models.TextChoices("BindingProvider", members)  # type: ignore[call-overload]


BindingProvider = _provider_choices()


class BindingTool(models.TextChoices):
    KNOWLEDGE_SEARCH = "knowledge_search", "knowledge_search (document search)"
    ENTITY_RELATIONS_SEARCH = "entity_relations_search", "entity_relations_search (LightRAG only)"


class BindingScope(models.TextChoices):
    ALL = "all", "All (everything the credential can see)"
    DISABLED = "disabled", "Disabled (no searches)"
    SELECTED = "selected", "Selected: RAGFlow datasets and documents, or local collections"
