"""The provider registry: importable without Django, and the source of the provider choices."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from knowledgeweb.bindings.choices import BindingProvider
from knowledgeweb.providers.registry import all_query_modes, provider_is_remote, provider_specs

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
from knowledgeweb.providers.registry import provider_specs
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("django", "knowledgeweb"))
print(json.dumps({"names": [s.name for s in provider_specs()], "loaded": loaded}))
"""


def test_the_registry_loads_no_django_and_no_app_above_the_providers() -> None:
    # A fresh interpreter: this test process has Django loaded already through pytest-django.
    completed = subprocess.run(  # noqa: S603 - fixed arguments, our own interpreter
        [sys.executable, "-E", "-s", "-c", PROBE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    probe = json.loads(completed.stdout)
    assert probe["names"] == ["ragflow", "lightrag", "local"]
    apps = ("django", "knowledgeweb.library", "knowledgeweb.bindings", "knowledgeweb.retrieval")
    assert [m for m in probe["loaded"] if m.startswith(apps)] == []
    assert "knowledgeweb.providers.local.spec" in probe["loaded"]


def test_the_provider_choices_are_the_registry_s_and_unchanged() -> None:
    # These values and labels are in the migrations: changing them needs a migration.
    assert BindingProvider.choices == [
        ("ragflow", "RAGFlow"),
        ("lightrag", "LightRAG"),
        ("local", "Local index (embedded)"),
    ]
    assert [(s.name, s.label) for s in provider_specs()] == BindingProvider.choices
    assert [s.name for s in provider_specs() if provider_is_remote(s.name)] == ["ragflow", "lightrag"]
    assert not provider_is_remote("nonesuch")
    assert all_query_modes() == ("naive", "local", "global", "hybrid", "mix")
