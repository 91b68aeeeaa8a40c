"""The closed vocabularies a binding is written in."""

from __future__ import annotations

from django.db import models


class BindingProvider(models.TextChoices):
    RAGFLOW = "ragflow", "RAGFlow"
    LIGHTRAG = "lightrag", "LightRAG"
    LOCAL = "local", "Local index (embedded)"


class BindingTool(models.TextChoices):
    KNOWLEDGE_SEARCH = "knowledge_search", "knowledge_search (document search)"
    ENTITY_RELATIONS_SEARCH = "entity_relations_search", "entity_relations_search (LightRAG only)"


class BindingScope(models.TextChoices):
    ALL = "all", "All (everything the credential can see)"
    DISABLED = "disabled", "Disabled (no searches)"
    SELECTED = "selected", "Selected: RAGFlow datasets and documents, or local collections"


#: Providers reached over HTTP with a credential from the environment.
REMOTE_PROVIDERS = frozenset({BindingProvider.RAGFLOW, BindingProvider.LIGHTRAG})
