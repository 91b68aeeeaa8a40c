"""The layers hold: ``lint-imports`` keeps every contract of pyproject.toml, and an upward import
hidden inside a function breaks one (docs/architecture.md, "Layers").

The canaries run the real linter over a copy of the package with one module added, so the
tree itself never changes; each fails the lint only because import-linter counts imports made
inside functions, which a ``sys.modules`` probe after an import cannot see.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - fixed arguments, the project's own linter
        [str(LINT_IMPORTS), "--no-logo", "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)},
    )


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(
        ROOT / "knowledgeweb",
        tmp_path / "knowledgeweb",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "templates", "static"),
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_tree_keeps_every_import_contract() -> None:
    completed = _lint(ROOT)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "Contracts: 7 kept, 0 broken." in completed.stdout


CANARIES = [
    pytest.param(
        "knowledgeweb/knowledge/canary.py",
        "from knowledgeweb.threads.models import Thread",
        [
            "Imports point downward",
            "knowledgeweb.knowledge is not allowed to import knowledgeweb.threads",
            "knowledgeweb.knowledge.canary -> knowledgeweb.threads.models (l.5)",
            "The contract core is pure Python: no Django, no HTTP client BROKEN",
        ],
        id="the contract core reaching up to an app",
    ),
    pytest.param(
        "knowledgeweb/providers/canary.py",
        "from knowledgeweb.library.provider import LocalProvider",
        [
            "knowledgeweb.providers is not allowed to import knowledgeweb.library",
            "knowledgeweb.providers.canary -> knowledgeweb.library.provider (l.5)",
            "Providers know no Django and no app: what they need from above comes in the",
        ],
        id="a provider importing the library app",
    ),
    pytest.param(
        "knowledgeweb/threads/rendering/canary.py",
        "from knowledgeweb.threads.selectors import thread_renders",
        ["knowledgeweb.threads.rendering is not allowed to import", "knowledgeweb.threads.selectors"],
        id="the render package importing the selectors",
    ),
    pytest.param(
        "knowledgeweb/threads/services/canary.py",
        "from knowledgeweb.threads.interchange.export import thread_export",
        ["knowledgeweb.threads.services is not allowed to import", "knowledgeweb.threads.interchange"],
        id="the store's services importing the interchange",
    ),
    pytest.param(
        "knowledgeweb/threads/rendering/canary.py",
        "from bleach.sanitizer import BleachSanitizerFilter",
        [
            "bleach only behind threads/rendering/sanitizer.py",
            "knowledgeweb.threads.rendering.canary -> bleach (l.5)",
        ],
        id="a render module beside the sanitizer reaching into bleach",
    ),
    pytest.param(
        "knowledgeweb/web/canary.py",
        "import bleach",
        ["bleach only behind threads/rendering/sanitizer.py", "knowledgeweb.web.canary -> bleach (l.5)"],
        id="a page module using bleach itself",
    ),
    pytest.param(
        "knowledgeweb/bindings/selectors_canary.py",
        "from knowledgeweb.bindings.services import binding_create",
        [],
        id="a module beside the selectors may import a service (control)",
    ),
]


@pytest.mark.parametrize(("path", "statement", "expected"), CANARIES)
def test_a_function_level_upward_import_fails_the_lint(
    tmp_path: Path, path: str, statement: str, expected: list[str]
) -> None:
    root = _copy(tmp_path)
    (root / path).write_text(
        f'"""A canary."""\n\n\ndef reach_up() -> object:\n    {statement}\n\n    return object\n'
    )

    completed = _lint(root)

    output = " ".join((completed.stdout + completed.stderr).split())
    if not expected:
        assert completed.returncode == 0, output
        return
    assert completed.returncode != 0
    assert "BROKEN" in output
    for line in expected:
        assert " ".join(line.split()) in output


def test_a_selector_importing_a_service_fails_the_lint(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    selectors = root / "knowledgeweb" / "bindings" / "selectors.py"
    selectors.write_text(
        selectors.read_text()
        + "\n\ndef _writes() -> object:\n    from knowledgeweb.bindings import services\n\n    return services\n"
    )

    completed = _lint(root)

    output = " ".join(completed.stdout.split())
    assert completed.returncode != 0
    assert "Selectors only read: no selector imports a service BROKEN" in output
    assert "knowledgeweb.bindings.selectors -> knowledgeweb.bindings.services" in output
