"""The local index's part of the binding admin form: the collections a selected scope searches."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import Count

from knowledgeweb.bindings.choices import BindingScope
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.library.models import Collection, Document
from knowledgeweb.providers.local.selection import NAME, local_collection_ids


class LocalFormHooks:
    provider = NAME
    # The local index selects collections by ticking them; RAGFlow's lines do not apply.
    replaces = ("selection",)
    error_fields = {"selection": "collections"}

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
        if not chosen:
            return  # another provider's form: the collections were ignored (cleared) already
        collections = list(cleaned.get("collections") or [])
        if cleaned.get("scope") == BindingScope.SELECTED:
            # _post_clean() then builds the instance from this, and the model's rules check it.
            cleaned["selection"] = [{"dataset_id": str(c.pk), "document_ids": []} for c in collections]
        elif collections:
            form.add_error("collections", "Collections are used only with the scope 'selected'.")

    def dead_ends(self, cleaned: dict[str, Any]) -> dict[str, str]:
        if cleaned.get("scope") == BindingScope.SELECTED:
            chosen = list(cleaned.get("collections") or [])
            empty = (
                Collection.objects.filter(pk__in=[c.pk for c in chosen])
                .annotate(n=Count("documents"))
                .filter(n=0)
                .order_by("name")
                .values_list("name", flat=True)
            )
            names = [f"'{name}'" for name in empty]
            if not names:
                return {}
            which = (
                f"Collection {names[0]} has" if len(names) == 1 else f"Collections {', '.join(names)} have"
            )
            return {
                "collections": f"{which} no documents, so this binding's searches of it find nothing. Add "
                "documents first (manage.py ingest, or Add document), or tick 'Save anyway'."
            }
        if cleaned.get("scope") == BindingScope.ALL and not Document.objects.exists():
            return {
                "scope": "The local index has no documents yet, so this binding's searches find nothing. Add "
                "documents first (manage.py ingest, or Add document), or tick 'Save anyway'."
            }
        return {}

    def documents(self, binding: KnowledgeBinding) -> int | None:
        if binding.scope == BindingScope.DISABLED:
            return 0
        if binding.scope == BindingScope.ALL:
            return Document.objects.count()
        ids = local_collection_ids(binding.selection)
        return 0 if ids is None else Document.objects.filter(collection_id__in=ids).count()


HOOKS = LocalFormHooks()
