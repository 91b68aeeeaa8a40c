"""No product module reaches into bleach's internals: bleach is one plain allowlist pass behind
``threads/rendering/sanitizer.py`` (docs/architecture.md#pages-and-dom-hooks).

import-linter's ``sanitizer`` contract (pyproject.toml) keeps every other module from importing
bleach at all, but it names external packages only by their root, and only those the tree
imports; this test reads the source for what the contract cannot see: html5lib, a submodule of
bleach (``bleach.sanitizer``, ``bleach.html5lib_shim``, its vendored html5lib), a name of
bleach's beyond its public ``Cleaner``, or a class built on one of bleach's.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "knowledgeweb"
SANITIZER = PACKAGE / "threads" / "rendering" / "sanitizer.py"
#: The names of bleach the sanitizer may use: its documented cleaner, nothing underneath.
PUBLIC = frozenset({"Cleaner"})


def bleach_misuses(source: str) -> list[str]:
    """Every use of bleach or html5lib in ``source`` that goes past ``bleach.Cleaner``."""
    tree = ast.parse(source)
    found: list[str] = []
    bleach_names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                if root == "html5lib" or (root == "bleach" and alias.name != "bleach"):
                    found.append(f"l.{node.lineno}: import {alias.name}")
                elif alias.name == "bleach":
                    bleach_names.add(alias.asname or "bleach")
        elif isinstance(node, ast.ImportFrom) and node.module:
            root = node.module.split(".")[0]
            if root == "html5lib" or (root == "bleach" and node.module != "bleach"):
                found.append(f"l.{node.lineno}: from {node.module} import …")
            elif node.module == "bleach":
                found += [
                    f"l.{node.lineno}: from bleach import {alias.name}"
                    for alias in node.names
                    if alias.name not in PUBLIC
                ]
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in bleach_names
            and node.attr not in PUBLIC
        ):
            found.append(f"l.{node.lineno}: {node.value.id}.{node.attr}")
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                if any(isinstance(n, ast.Name) and n.id in bleach_names | PUBLIC for n in ast.walk(base)):
                    found.append(f"l.{node.lineno}: class {node.name} subclasses bleach")
    return found


def _product_modules() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py") if "migrations" not in path.parts)


def test_no_product_module_reaches_into_bleach_or_html5lib() -> None:
    misuses = {
        str(path.relative_to(ROOT)): found
        for path in _product_modules()
        if (found := bleach_misuses(path.read_text()))
    }
    assert misuses == {}


def test_only_the_sanitizer_imports_bleach_and_it_uses_the_public_cleaner() -> None:
    importers = [
        str(path.relative_to(ROOT)) for path in _product_modules() if "bleach" in _imported_roots(path)
    ]
    assert importers == ["knowledgeweb/threads/rendering/sanitizer.py"]
    assert "bleach.Cleaner(" in SANITIZER.read_text()


def _imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from bleach.sanitizer import BleachSanitizerFilter", ["l.1: from bleach.sanitizer import …"]),
        ("from bleach import html5lib_shim", ["l.1: from bleach import html5lib_shim"]),
        ("import bleach.html5lib_shim", ["l.1: import bleach.html5lib_shim"]),
        ("from bleach._vendor.html5lib import filters", ["l.1: from bleach._vendor.html5lib import …"]),
        ("import html5lib", ["l.1: import html5lib"]),
        ("from html5lib.filters.base import Filter", ["l.1: from html5lib.filters.base import …"]),
        ("import bleach\nF = bleach.html5lib_shim.Filter", ["l.2: bleach.html5lib_shim"]),
        ("import bleach as b\nx = b.sanitizer", ["l.2: b.sanitizer"]),
        ("import bleach\nclass C(bleach.Cleaner): ...", ["l.2: class C subclasses bleach"]),
        ("from bleach import Cleaner\nclass C(Cleaner): ...", ["l.2: class C subclasses bleach"]),
        ("import bleach\nc = bleach.Cleaner(tags=set())", []),
    ],
)
def test_the_check_sees_each_way_into_bleach(source: str, expected: list[str]) -> None:
    assert bleach_misuses(source) == expected
