"""The binding admin form: one clear error per problem, and only the fields the chosen provider uses.

What it shares with the answer-model form (who will be able to use what is saved, the
confirmation before a configuration that serves nobody is saved, the preview) is
``AccessFormMixin`` (``bindings/access_form.py``); its list fields are in ``bindings/form_fields.py``.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from knowledgeweb.bindings.access_form import AGENT_NAMES_HELP, AccessFormMixin
from knowledgeweb.bindings.choices import BindingScope, BindingTool
from knowledgeweb.bindings.form_fields import LinesField, SelectionField
from knowledgeweb.bindings.form_hooks import form_hooks
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.rules import TIMEOUT_RANGE, TOP_K_RANGE, timeout_ceiling
from knowledgeweb.providers.registry import (
    all_query_modes,
    mode_provider_labels,
    provider_is_remote,
    provider_spec,
    provider_specs,
)

#: Every provider's query modes as admin choices (LightRAG's: bypass retrieves nothing and is not offered).
QUERY_MODES = all_query_modes()
MODE_CHOICES = [(mode, mode) for mode in QUERY_MODES]
#: The empty default-mode choice says what each provider with modes uses without one.
USUAL_MODE_CHOICE = " ".join(
    s.modes.usual_choice for s in provider_specs() if s.modes and s.modes.usual_choice
)
#: Providers' own form parts (the local index's collections), built once with the form class.
HOOKS = form_hooks()


class BindingFormBase(AccessFormMixin):
    """The fields every binding has; ``KnowledgeBindingForm`` adds the providers' own."""

    agent_names = LinesField(required=False, help_text=AGENT_NAMES_HELP)
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
        if isinstance(provider, str) and provider_spec(provider) is not None:
            # Fields of other providers are hidden by the page's script and ignored here, so
            # a value left in one (or typed without JavaScript) is neither an error nor saved.
            for name in FIELD_PROVIDERS:
                if name in self.fields and provider not in FIELD_PROVIDERS[name]:
                    cleaned[name] = _EMPTY.get(name, "")
                    self.errors.pop(name, None)
        for hooks in HOOKS:
            hooks.clean(self, cleaned, chosen=hooks.provider == provider)
        return cleaned

    def _update_errors(self, errors: ValidationError) -> None:
        # A rule about the stored selection is about the field the chosen provider
        # edits it in (the local index's collections, not RAGFlow's lines).
        provider = (self.cleaned_data or {}).get("provider")
        if hasattr(errors, "error_dict"):
            for hooks in HOOKS:
                if hooks.provider == provider:
                    moved: dict[str, list[ValidationError]] = {}
                    for field, messages in errors.error_dict.items():
                        moved.setdefault(hooks.error_fields.get(field, field), []).extend(messages)
                    errors = ValidationError(moved)
        super()._update_errors(errors)

    def key_needed(self, cleaned: dict[str, Any]) -> bool:
        return provider_is_remote(cleaned.get("provider") or "") and bool(cleaned.get("api_key_env"))

    def dead_ends(self, cleaned: dict[str, Any]) -> dict[str, str]:
        problems = super().dead_ends(cleaned)
        if not cleaned.get("enabled") or cleaned.get("scope") == BindingScope.DISABLED:
            return problems
        for hooks in HOOKS:
            if hooks.provider == cleaned.get("provider"):
                for field, message in hooks.dead_ends(cleaned).items():
                    problems.setdefault(field, message)
        return problems

    def binding_notes(self) -> list[str]:
        """Conditions the access summary mentions beside the users."""
        scope = self["scope"].value()
        if scope == BindingScope.DISABLED:
            return ["Its scope is disabled: it runs no searches for anyone."]
        return []

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
            "browser_use",
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


def _field_providers() -> dict[str, tuple[str, ...]]:
    """Which providers each provider-dependent field applies to, from the registry and the hooks."""
    specs = provider_specs()
    remote = tuple(s.name for s in specs if s.remote)
    replaced = {field for hooks in HOOKS for field in hooks.replaces}
    selection_owners = tuple(
        s.name
        for s in specs
        if s.selection_problems is not None
        and not any(hooks.provider == s.name and "selection" in hooks.replaces for hooks in HOOKS)
    )
    fields: dict[str, tuple[str, ...]] = {
        "base_url": remote,
        "api_key_env": remote,
        "credential": remote,
        "query_modes": tuple(s.name for s in specs if s.modes is not None),
        "default_mode": tuple(s.name for s in specs if s.modes is not None),
    }
    if "selection" in replaced or selection_owners != tuple(s.name for s in specs):
        fields["selection"] = selection_owners
    for hooks in HOOKS:
        for name in hooks.fields():
            fields[name] = (hooks.provider,)
    return fields


#: Field name -> the providers it applies to; any other provider hides and ignores it.
FIELD_PROVIDERS = _field_providers()
#: Tool -> the providers offering it (the page hides the others' tool boxes).
TOOL_PROVIDERS = {
    tool: tuple(s.name for s in provider_specs() if tool in s.tools) for tool in BindingTool.values
}
#: Scope -> the providers accepting it (``selected`` only where a selection has rules).
SCOPE_PROVIDERS = {
    scope: tuple(
        s.name for s in provider_specs() if scope != BindingScope.SELECTED or s.selection_problems is not None
    )
    for scope in BindingScope.values
}
#: What an ignored field is cleaned to.
_EMPTY: dict[str, Any] = {"selection": [], "query_modes": [], "collections": []}
