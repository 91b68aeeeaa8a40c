"""The admin form: plain-text widgets for the list fields, and one clear error per problem."""

from __future__ import annotations

from typing import Any

from django import forms

from knowledgeweb.bindings.choices import BindingTool
from knowledgeweb.bindings.form_hooks import form_hooks
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.rules import TIMEOUT_RANGE, TOP_K_RANGE, timeout_ceiling
from knowledgeweb.providers.registry import all_query_modes, mode_provider_labels, provider_specs

#: Every provider's query modes as admin choices (LightRAG's: bypass retrieves nothing and is not offered).
QUERY_MODES = all_query_modes()
MODE_CHOICES = [(mode, mode) for mode in QUERY_MODES]
#: The empty default-mode choice says what each provider with modes uses without one.
USUAL_MODE_CHOICE = " ".join(
    s.modes.usual_choice for s in provider_specs() if s.modes and s.modes.usual_choice
)
#: Providers' own form parts (the local index's collections), built once with the form class.
HOOKS = form_hooks()


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


class BindingFormBase(forms.ModelForm):
    """The fields every binding has; ``KnowledgeBindingForm`` adds the providers' own."""

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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        instance = self.instance
        if instance.pk:
            for hooks in HOOKS:
                if hooks.provider == instance.provider:
                    self.initial.update(hooks.initial(instance))
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
        provider = cleaned.get("provider")
        for hooks in HOOKS:
            hooks.clean(self, cleaned, chosen=hooks.provider == provider)
        return cleaned

    query_modes = forms.MultipleChoiceField(
        choices=MODE_CHOICES,
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text=f"{mode_provider_labels()} only: the modes a search may name. The default mode is "
        "always allowed.",
    )
    default_mode = forms.ChoiceField(
        choices=[("", USUAL_MODE_CHOICE), *MODE_CHOICES],
        required=False,
        help_text=f"{mode_provider_labels()} only: the mode a search runs in when it names none.",
    )

    def clean_query_modes(self) -> list[str]:
        # Stored in the provider's own order, whatever order the boxes were ticked in.
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
            "query_modes",
            "default_mode",
        ]
        widgets = {
            "top_k": forms.NumberInput(attrs={"min": TOP_K_RANGE[0], "max": TOP_K_RANGE[1]}),
            "timeout": forms.NumberInput(attrs={"min": TIMEOUT_RANGE[0], "max": TIMEOUT_RANGE[1]}),
        }


def _form_class() -> type[BindingFormBase]:
    # Declared on the class, not added per instance: the admin lists every field in its fieldsets.
    extra: dict[str, forms.Field] = {}
    for hooks in HOOKS:
        extra.update(hooks.fields())
    fields = list(BindingFormBase.Meta.fields)
    at = fields.index("selection") + 1
    meta = type("Meta", (BindingFormBase.Meta,), {"fields": [*fields[:at], *extra, *fields[at:]]})
    return type("KnowledgeBindingForm", (BindingFormBase,), {**extra, "Meta": meta})


KnowledgeBindingForm = _form_class()
#: The providers' own fields, for the admin's fieldsets.
PROVIDER_FIELDS = [name for hooks in HOOKS for name in hooks.fields()]
