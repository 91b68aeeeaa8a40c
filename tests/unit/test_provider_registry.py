"""The provider registry: the source of the provider choices, completed by the library app.

That the registry imports neither Django nor any app is a ``forbidden`` contract of
import-linter (pyproject.toml, ``[tool.importlinter]``; tests/unit/test_import_layers.py).
"""

from __future__ import annotations

import pytest

from knowledgeweb.bindings.choices import provider_choices
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.library.provider_spec import SPEC as LOCAL
from knowledgeweb.providers.registry import (
    all_query_modes,
    provider_is_remote,
    provider_register,
    provider_specs,
)
from knowledgeweb.providers.spec import ProviderSpec


def test_the_provider_choices_are_the_registry_s_and_unchanged() -> None:
    # These values and labels are what bindings store: the local index is registered by its
    # app's ready(), after the two providers the registry lists itself.
    assert provider_choices() == [
        ("ragflow", "RAGFlow"),
        ("lightrag", "LightRAG"),
        ("local", "Local index (embedded)"),
    ]
    assert KnowledgeBinding._meta.get_field("provider").choices == provider_choices()
    assert [(s.name, s.label) for s in provider_specs()] == provider_choices()
    assert [s.name for s in provider_specs() if provider_is_remote(s.name)] == ["ragflow", "lightrag"]
    assert not provider_is_remote("nonesuch")
    assert all_query_modes() == ("naive", "local", "global", "hybrid", "mix")


def test_registering_the_same_spec_again_changes_nothing() -> None:
    before = provider_specs()
    provider_register(LOCAL)
    assert provider_specs() == before


def test_another_spec_under_a_taken_name_is_refused() -> None:
    impostor = ProviderSpec(
        name="local", label="Impostor", remote=False, tools=(), capabilities=tuple, factory=LOCAL.factory
    )
    with pytest.raises(ValueError, match="A provider named 'local' is already registered"):
        provider_register(impostor)
    assert [s.label for s in provider_specs()][-1] == "Local index (embedded)"
