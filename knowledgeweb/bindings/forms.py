"""The admin form: plain-text widgets for the list fields, and one clear error per problem."""

from __future__ import annotations

from typing import Any

from django import forms

from knowledgeweb.bindings.choices import BindingTool
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.rules import TIMEOUT_RANGE, TOP_K_RANGE


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
        ]
        widgets = {
            "top_k": forms.NumberInput(attrs={"min": TOP_K_RANGE[0], "max": TOP_K_RANGE[1]}),
            "timeout": forms.NumberInput(attrs={"min": TIMEOUT_RANGE[0], "max": TIMEOUT_RANGE[1]}),
        }
