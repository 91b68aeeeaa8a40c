"""The admin form: plain-text widgets for the list fields, and one clear error per problem."""

from __future__ import annotations

from typing import Any

from django import forms

from knowledgeweb.bindings.choices import BindingProvider, BindingScope, BindingTool
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.rules import TIMEOUT_RANGE, TOP_K_RANGE, local_collection_ids, timeout_ceiling
from knowledgeweb.library.models import Collection
from knowledgeweb.providers.lightrag import QUERY_MODES

#: LightRAG's retrieval modes as admin choices (bypass retrieves nothing and is not offered).
MODE_CHOICES = [(mode, mode) for mode in QUERY_MODES]


class LinesField(forms.CharField):
    """A list of strings edited as one item per line."""

    widget = forms.Textarea(attrs={"rows": 4})

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list):
            return "\n".join(str(item) for item in value)
        return value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = super().to_python(value) or ""
        return [line.strip() for line in text.splitlines() if line.strip()]


class SelectionField(LinesField):
    """RAGFlow selection, one line per dataset (``DATASET_ID``) or document (``DATASET_ID/DOCUMENT_ID``)."""

    def prepare_value(self, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        lines: list[str] = []
        for item in value:
            if not isinstance(item, dict):
                continue
            dataset_id = item.get("dataset_id", "")
            documents = item.get("document_ids") or []
            lines.extend([f"{dataset_id}/{doc}" for doc in documents] or [str(dataset_id)])
        return "\n".join(lines)

    def to_python(self, value: Any) -> list[dict[str, Any]]:  # type: ignore[override]
        grouped: dict[str, list[str]] = {}
        whole: set[str] = set()
        for line in super().to_python(value):
            dataset_id, slash, document_id = line.partition("/")
            dataset_id, document_id = dataset_id.strip(), document_id.strip()
            if slash and not document_id:
                raise forms.ValidationError(f"Line {line!r} names no document after '/'.")
            grouped.setdefault(dataset_id, [])
            if document_id:
                grouped[dataset_id].append(document_id)
            else:
                whole.add(dataset_id)
        mixed = sorted(dataset_id for dataset_id in whole if grouped[dataset_id])
        if mixed:
            raise forms.ValidationError(
                f"Dataset {mixed[0]} is listed both whole and with documents; keep one of the two."
            )
        return [{"dataset_id": d, "document_ids": docs} for d, docs in grouped.items()]


class KnowledgeBindingForm(forms.ModelForm):
    agent_names = LinesField(
        required=False,
        help_text="One exact agent name per line. Leave empty to allow any agent name.",
    )
    tools = forms.MultipleChoiceField(
        choices=BindingTool.choices, widget=forms.CheckboxSelectMultiple, required=False
    )
    selection = SelectionField(
        required=False,
        help_text="Only with the scope 'selected' (RAGFlow): one line per whole dataset (DATASET_ID) "
        "or per document (DATASET_ID/DOCUMENT_ID); at most 1000 documents.",
    )
    collections = forms.ModelMultipleChoiceField(
        queryset=Collection.objects.order_by("name"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Only with the scope 'selected' (local index): the collections this binding searches, "
        "and whose documents its users may open. Stored by id, so renaming a collection keeps it selected.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        instance = self.instance
        if (
            instance.pk
            and instance.provider == BindingProvider.LOCAL
            and instance.scope == BindingScope.SELECTED
        ):
            self.initial["collections"] = sorted(local_collection_ids(instance.selection) or ())
            # The collections field shows a local selection; the lines field is RAGFlow's.
            self.initial["selection"] = []
        # The ceiling is configuration, read when the form is built rather than at import.
        ceiling = timeout_ceiling()
        timeout = self.fields["timeout"]
        timeout.widget.attrs.update(min=TIMEOUT_RANGE[0], max=ceiling)
        timeout.help_text = (
            f"Seconds, {TIMEOUT_RANGE[0]}-{ceiling}: one deadline for the whole search, every request "
            "of it included (KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING sets the most)."
        )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        provider, scope = cleaned.get("provider"), cleaned.get("scope")
        collections = list(cleaned.get("collections") or [])
        if provider == BindingProvider.LOCAL:
            if cleaned.get("selection"):
                self.add_error(
                    "selection", "For the local index, tick collections below; these lines are for RAGFlow."
                )
            elif scope == BindingScope.SELECTED:
                # _post_clean() then builds the instance from this, and the model's rules check it.
                cleaned["selection"] = [{"dataset_id": str(c.pk), "document_ids": []} for c in collections]
            elif collections:
                self.add_error("collections", "Collections are used only with the scope 'selected'.")
        elif collections:
            self.add_error("collections", "Collections are for local bindings; RAGFlow uses the lines above.")
        return cleaned

    query_modes = forms.MultipleChoiceField(
        choices=MODE_CHOICES,
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text="LightRAG only: the modes a search may name. The default mode is always allowed.",
    )
    default_mode = forms.ChoiceField(
        choices=[("", "(LightRAG's usual: mix for documents, hybrid for relations)"), *MODE_CHOICES],
        required=False,
        help_text="LightRAG only: the mode a search runs in when it names none.",
    )

    def clean_query_modes(self) -> list[str]:
        # Stored in LightRAG's own order, whatever order the boxes were ticked in.
        chosen = self.cleaned_data.get("query_modes") or []
        return [mode for mode in QUERY_MODES if mode in chosen]

    class Meta:
        model = KnowledgeBinding
        fields = [
            "name",
            "title",
            "description",
            "provider",
            "enabled",
            "base_url",
            "api_key_env",
            "users",
            "agent_names",
            "tools",
            "top_k",
            "timeout",
            "scope",
            "selection",
            "collections",
            "query_modes",
            "default_mode",
        ]
        widgets = {
            "top_k": forms.NumberInput(attrs={"min": TOP_K_RANGE[0], "max": TOP_K_RANGE[1]}),
            "timeout": forms.NumberInput(attrs={"min": TIMEOUT_RANGE[0], "max": TIMEOUT_RANGE[1]}),
        }
