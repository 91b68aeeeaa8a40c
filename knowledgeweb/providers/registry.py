"""Every provider the application knows: one line each (docs/architecture.md, "Adding a provider").

The order is the admin's order; the choices of ``KnowledgeBinding.provider`` are built from it
(``bindings.choices.provider_choices``). A provider that lives in a Django app above this
layer (the local index, ``knowledgeweb.library``) is not imported here: its app registers
it from ``ready()`` with ``provider_register``, so it is listed once Django is set up.
"""

from __future__ import annotations

from knowledgeweb.providers.lightrag.spec import SPEC as LIGHTRAG
from knowledgeweb.providers.ragflow.spec import SPEC as RAGFLOW
from knowledgeweb.providers.spec import ProviderSpec

PROVIDERS: dict[str, ProviderSpec] = {spec.name: spec for spec in (RAGFLOW, LIGHTRAG)}


def provider_register(spec: ProviderSpec) -> None:
    """Add ``spec`` after the providers listed above (an app's ``ready()`` calls this).

    Registering the same spec again is a no-op (``ready()`` may run more than once in a
    process); another spec under a name already taken is a programming error.
    """
    known = PROVIDERS.get(spec.name)
    if known is not None and known is not spec:
        raise ValueError(f"A provider named {spec.name!r} is already registered.")
    PROVIDERS[spec.name] = spec


def provider_spec(name: str) -> ProviderSpec | None:
    """The spec of the provider stored as ``name``; ``None`` for one the registry does not know."""
    return PROVIDERS.get(name)


def provider_specs() -> tuple[ProviderSpec, ...]:
    return tuple(PROVIDERS.values())


def provider_label(name: str) -> str:
    """The provider's label, or ``name`` itself for one the registry does not know."""
    spec = PROVIDERS.get(name)
    return spec.label if spec is not None else name


def all_query_modes() -> tuple[str, ...]:
    """Every query mode any provider offers, each once, in registry then provider order."""
    modes: list[str] = []
    for spec in PROVIDERS.values():
        if spec.modes is not None:
            modes.extend(m for m in spec.modes.query_modes if m not in modes)
    return tuple(modes)


def mode_provider_labels() -> str:
    """The providers that have query modes, for messages: "LightRAG"."""
    return " and ".join(spec.label for spec in PROVIDERS.values() if spec.modes is not None)


def provider_is_remote(name: str) -> bool:
    """Reached over HTTP with a credential from the environment (``False`` for an unknown provider)."""
    spec = PROVIDERS.get(name)
    return spec is not None and spec.remote
