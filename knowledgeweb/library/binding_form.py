"""The local index's part of the binding admin form: the collections a selected scope searches."""

from __future__ import annotations

from typing import Any

from django import forms

from knowledgeweb.bindings.choices import BindingScope
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.library.models import Collection
from knowledgeweb.providers.local.selection import NAME, local_collection_ids


class LocalFormHooks:
    provider = NAME

    def fields(self) -> dict[str, forms.Field]:
        return {
            "collections": forms.ModelMultipleChoiceField(
                queryset=Collection.objects.order_by("name"),
                required=False,
                widget=forms.CheckboxSelectMultiple,
                help_text="Only with the scope 'selected' (local index): the collections this binding "
                "searches, and whose documents its users may open. Stored by id, so renaming a "
                "collection keeps it selected.",
            )
        }

    def initial(self, instance: KnowledgeBinding) -> dict[str, Any]:
        if instance.scope != BindingScope.SELECTED:
            return {}
        # The collections field shows a local selection; the lines field is RAGFlow's.
        return {"collections": sorted(local_collection_ids(instance.selection) or ()), "selection": []}

    def clean(self, form: forms.ModelForm, cleaned: dict[str, Any], *, chosen: bool) -> None:
        collections = list(cleaned.get("collections") or [])
        if chosen:
            if cleaned.get("selection"):
                form.add_error(
                    "selection", "For the local index, tick collections below; these lines are for RAGFlow."
                )
            elif cleaned.get("scope") == BindingScope.SELECTED:
                # _post_clean() then builds the instance from this, and the model's rules check it.
                cleaned["selection"] = [{"dataset_id": str(c.pk), "document_ids": []} for c in collections]
            elif collections:
                form.add_error("collections", "Collections are used only with the scope 'selected'.")
        elif collections:
            form.add_error("collections", "Collections are for local bindings; RAGFlow uses the lines above.")


HOOKS = LocalFormHooks()
