"""The scope of one search: the binding's own, optionally narrowed by the caller.

A caller may narrow a RAGFlow binding's scope, never widen it. LightRAG and the
local index accept only ``all``: any selection is refused before a request.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from knowledgeweb.bindings.choices import BindingProvider, BindingScope
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.rules import selection_from_json
from knowledgeweb.providers.ragflow import DatasetSelection
from knowledgeweb.providers.ragflow.scope import CheckedSelection, selection_problems
from knowledgeweb.retrieval.errors import RetrievalInvalidError, RetrievalRefusedError

RequestedScope = Literal["all"] | Sequence[DatasetSelection] | None


def scope_resolve(
    *, binding: KnowledgeBinding, requested: RequestedScope
) -> tuple[DatasetSelection, ...] | None:
    """The selection to search (``None`` = everything the credential can see).

    Each selection is checked once per search: a configured one by the binding's
    rules in ``binding_authorize`` (which always runs first), a requested one here.
    """
    configured = (
        CheckedSelection(selection_from_json(binding.selection))
        if binding.scope == BindingScope.SELECTED
        else None
    )
    if requested is None or requested == "all":
        return configured
    if isinstance(requested, str):
        raise RetrievalInvalidError(f"Unknown scope {requested!r}: send 'all' or a dataset selection.")
    selection = tuple(requested)
    if binding.provider != BindingProvider.RAGFLOW:
        label = BindingProvider(binding.provider).label
        raise RetrievalInvalidError(
            f"{label} accepts only the scope 'all'; a dataset or document selection is refused "
            "before any request.",
            code="scope_not_supported",
        )
    problems = selection_problems(selection)
    if problems:
        raise RetrievalInvalidError(
            "The requested scope was rejected: " + " ".join(problems), code="invalid_scope"
        )
    if configured is not None:
        _check_within(selection, configured, binding.name)
    return CheckedSelection(selection)


def _check_within(
    selection: tuple[DatasetSelection, ...], configured: tuple[DatasetSelection, ...], name: str
) -> None:
    allowed = {item.dataset_id: set(item.document_ids) for item in configured}
    for item in selection:
        if item.dataset_id not in allowed:
            raise RetrievalRefusedError(
                f"Dataset {item.dataset_id} is outside the scope of binding '{name}'.", code="scope_forbidden"
            )
        documents = allowed[item.dataset_id]
        if not documents:
            continue  # the whole dataset is allowed, so any documents in it are too
        if not item.document_ids:
            raise RetrievalRefusedError(
                f"Binding '{name}' allows only selected documents of dataset {item.dataset_id}, "
                "not the whole dataset.",
                code="scope_forbidden",
            )
        outside = [d for d in item.document_ids if d not in documents]
        if outside:
            raise RetrievalRefusedError(
                f"Document {outside[0]} is outside the scope of binding '{name}'.", code="scope_forbidden"
            )
