"""How a provider adds to the binding admin form, beside the fields every binding has.

A ``ProviderSpec.form_hooks`` names an object of this shape by dotted path
(``"package.module:NAME"``); it is imported when the form class is built, so a
provider's Django parts (the local index's collections) stay in its own app.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, Protocol

from django import forms

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.providers.registry import provider_specs


class BindingFormHooks(Protocol):
    #: The provider these hooks belong to (``ProviderSpec.name``).
    provider: str
    #: Common fields these hooks stand in for: hidden and ignored for this provider ("selection").
    replaces: tuple[str, ...]
    #: Where the binding rules' messages about a common field belong instead ({"selection": "collections"}).
    error_fields: dict[str, str]

    def fields(self) -> dict[str, forms.Field]:
        """Extra form fields, added after ``selection`` in this order."""
        ...

    def initial(self, instance: KnowledgeBinding) -> dict[str, Any]:
        """Initial values for a saved binding of this provider."""
        ...

    def clean(self, form: forms.ModelForm, cleaned: dict[str, Any], *, chosen: bool) -> None:
        """Check (and fill) ``cleaned``; ``chosen``: the form's provider is this one."""
        ...

    def dead_ends(self, cleaned: dict[str, Any]) -> dict[str, str]:
        """What leaves a valid binding of this provider searching nothing, by field (asked, not refused)."""
        ...

    def documents(self, binding: KnowledgeBinding) -> int | None:
        """How many documents a saved binding searches, for the list page; ``None``: not known here."""
        ...


def form_hooks() -> list[BindingFormHooks]:
    """The form hooks of every provider that has any, in registry order."""
    hooks: list[BindingFormHooks] = []
    for spec in provider_specs():
        if spec.form_hooks:
            module, _, name = spec.form_hooks.partition(":")
            hooks.append(getattr(import_module(module), name))
    return hooks
