"""The admin's list fields: a list of strings, or a RAGFlow selection, edited as one item per line."""

from __future__ import annotations

from typing import Any

from django import forms


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
