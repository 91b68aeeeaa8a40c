"""What the binding and answer-model admin forms share (``AccessFormMixin``): one message per
problem, who will be able to use what is saved (``access_summary``), a confirmation before
a configuration that serves nobody is saved (``dead_ends``), and the no-save preview."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError

from knowledgeweb.bindings.access import AccessSummary, access_summary
from knowledgeweb.bindings.form_fields import LinesField
from knowledgeweb.providers.credentials import ENV_NAME_PATTERN, key_env_is_set

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
