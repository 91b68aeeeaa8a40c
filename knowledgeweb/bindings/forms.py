"""The admin form: plain-text widgets for the list fields, and one clear error per problem.

Beyond the model's rules the form says who will be able to use what is being saved
(``access_summary``), asks before saving a configuration that serves nobody
(``dead_ends``: a confirmation, never a silent save), and ignores the fields that do
not apply to the chosen provider.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError

from knowledgeweb.bindings.access import AccessSummary, access_summary
from knowledgeweb.bindings.choices import BindingScope, BindingTool
from knowledgeweb.bindings.form_hooks import form_hooks
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.rules import TIMEOUT_RANGE, TOP_K_RANGE, timeout_ceiling
from knowledgeweb.providers.credentials import ENV_NAME_PATTERN, key_env_is_set
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


#: The error code of a problem the admin may confirm ("Save anyway"); see ``AccessFormMixin.dead_ends``.
UNCONFIRMED = "unconfirmed"
#: The error code that holds a "preview" submit back from saving; the admin shows it as a notice.
PREVIEW = "preview"
CONFIRM_FIELD = "confirm_unused"
AGENT_NAMES_HELP = (
    "One exact agent name per line. Empty: any agent name, and the browser. With names: only those "
    "agents, and the browser (which sends no agent name) only if 'usable in the browser' is ticked."
)


def _without(data: Any, field: str) -> Any:
    """A mutable copy of the posted data (a ``QueryDict`` or a dict) with ``field`` emptied."""
    copied = data.copy()
    copied[field] = ""
    return copied


class AccessFormMixin(forms.ModelForm):
    """What the binding and answer-model forms share: one message per problem, the access summary,
    confirmation before a dead configuration is saved, and the no-save preview."""

    #: What the form saves, in messages ("binding", "answer model").
    what = "binding"

    confirm_unused = forms.BooleanField(
        required=False,
        label="Save anyway",
        help_text="Save although it serves nobody or searches nothing, as the messages above say.",
    )

    def full_clean(self) -> None:
        super().full_clean()
        if not self.is_bound:
            return
        # A preview or a connection test saves nothing, so it has nothing to confirm.
        if not self.errors and not self.is_preview and not self.cleaned_data.get(CONFIRM_FIELD):
            for field, message in self.dead_ends(self.cleaned_data).items():
                self.add_error(field, ValidationError(message, code=UNCONFIRMED))
        if self.is_preview and not self.errors:
            self.add_error(None, ValidationError("Preview only: nothing was saved.", code=PREVIEW))
        typed = self.data.get("api_key_env", "")
        if "api_key_env" in self.errors and typed and not ENV_NAME_PATTERN.fullmatch(typed):
            # Not a variable's name, so likely the key itself: the page does not echo it back.
            self.data = _without(self.data, "api_key_env")

    @property
    def is_preview(self) -> bool:
        """A submit that only shows (who can use it, or a connection test): it never saves."""
        return self.is_bound and ("_preview" in self.data or self.wants_connection_test)

    @property
    def wants_connection_test(self) -> bool:
        return self.is_bound and "_test_connection" in self.data

    @property
    def ready_to_test(self) -> bool:
        """Every rule holds (problems to confirm aside), so ``instance`` may be tested as it stands."""
        return self.is_bound and all(
            error.code in {UNCONFIRMED, PREVIEW}
            for errors in self.errors.as_data().values()
            for error in errors
        )

    @property
    def needs_confirmation(self) -> bool:
        """Whether the form is held back only for problems the admin may confirm."""
        return any(error.code == UNCONFIRMED for errors in self.errors.as_data().values() for error in errors)

    @property
    def held_for_preview_only(self) -> bool:
        """The only error is the preview's hold: the page is a preview, not a failed save."""
        data = self.errors.as_data()
        return list(data) == [NON_FIELD_ERRORS] and all(e.code == PREVIEW for e in data[NON_FIELD_ERRORS])

    def dead_ends(self, cleaned: dict[str, Any]) -> dict[str, str]:
        """Problems that leave what is saved serving nobody, by field; the admin must confirm them."""
        if not cleaned.get("enabled"):
            return {}  # disabled on purpose: it serves nobody, as the admin chose
        problems: dict[str, str] = {}
        if not cleaned.get("users"):
            problems["users"] = (
                f"Nobody can use this {self.what}: no users are chosen. Choose its users, or tick "
                "'Save anyway' to save it unused."
            )
        key_env = cleaned.get("api_key_env") or ""
        if self.key_needed(cleaned) and not key_env_is_set(key_env):
            problems["api_key_env"] = (
                f"{key_env} is not set in this server's environment, so every use of this {self.what} is "
                "refused until it is. Set it (and restart), or tick 'Save anyway'."
            )
        return problems

    def key_needed(self, cleaned: dict[str, Any]) -> bool:
        """Whether what is saved reads a key from the environment (a key variable is named)."""
        return bool(cleaned.get("api_key_env"))

    def _update_errors(self, errors: ValidationError) -> None:
        # One message per problem: a field the form already refused (an empty required
        # field, a malformed number) is not told again by the model's rules, which saw
        # the stored default instead of what was typed.
        if hasattr(errors, "error_dict"):
            kept = {
                field: messages
                for field, messages in errors.error_dict.items()
                if field == NON_FIELD_ERRORS or field not in self.errors
            }
            if not kept:
                return
            errors = ValidationError(kept)
        super()._update_errors(errors)  # type: ignore[misc]

    def access_summary(self, *, notes: Iterable[str] = ()) -> AccessSummary:
        """Who can use it as the form stands: what was typed when bound, what is stored otherwise."""
        users = self["users"].value() or []
        pks = sorted({int(getattr(u, "pk", u)) for u in users if str(getattr(u, "pk", u)).isdigit()})
        usernames = User.objects.filter(pk__in=pks).values_list("username", flat=True)
        agents = self["agent_names"].value()
        if not isinstance(agents, list):
            agents = LinesField().to_python(agents)
        return access_summary(
            usernames=list(usernames),
            agent_names=agents,
            browser_use=bool(self["browser_use"].value()),
            enabled=bool(self["enabled"].value()),
            what=self.what,
            notes=tuple(notes),
        )


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
