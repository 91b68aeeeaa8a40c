"""Fingerprints of what determines a render, so that no stored render or cache entry can go stale.

A render depends on the code that produces it and the libraries that code
calls; nothing else (messages never change). So the fingerprint is a hash of
those source files, the templates they fill and the installed versions of the
libraries, computed once per process. Change any of them and every stored
render is stale (re-rendered on its next read or by ``manage.py rerender``)
and every cache namespace is new. No constant has to be remembered.

The reader fingerprint covers only what decides evidence (the contract core's
reader); it names the validation cache's namespace.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterable
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

#: The modules whose code decides what evidence a tool message holds.
READER_MODULES: tuple[str, ...] = (
    "knowledgeweb.knowledge.reading",
    "knowledgeweb.knowledge.ids",
    "knowledgeweb.knowledge.bounds",
    "knowledgeweb.knowledge.types",
    "knowledgeweb.knowledge.citations",
)
READER_PACKAGES: tuple[str, ...] = ("pydantic",)

#: The modules whose code decides a stored render: the reader, the link grammar, the
#: resolver, the renderer, the export regenerator and the tool views.
RENDER_MODULES: tuple[str, ...] = (
    *READER_MODULES,
    "knowledgeweb.knowledge.linkgrammar",
    "knowledgeweb.knowledge.formatting",
    "knowledgeweb.knowledge.passages",
    "knowledgeweb.knowledge.fragments",
    "knowledgeweb.library.passages",
    "knowledgeweb.threads.evidence",
    "knowledgeweb.threads.exports",
    "knowledgeweb.threads.rendering.resolution",
    "knowledgeweb.threads.rendering.claims",
    "knowledgeweb.threads.rendering.markdown",
    "knowledgeweb.threads.rendering.message",
    "knowledgeweb.threads.rendering.pipeline",
    "knowledgeweb.threads.rendering.sanitizer",
    "knowledgeweb.threads.rendering.sources",
    "knowledgeweb.threads.rendering.tools",
)
RENDER_TEMPLATES: tuple[str, ...] = ("web/fragments/tool_message.html",)
RENDER_PACKAGES: tuple[str, ...] = (
    *READER_PACKAGES,
    "markdown-it-py",
    "linkify-it-py",
    "mdformat",
    "mdformat-gfm",
    "bleach",
    "Django",
)


def module_path(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise LookupError(f"cannot find the source of {name}")
    return Path(spec.origin)


def template_path(name: str) -> Path:
    from django.template.loader import get_template

    return Path(get_template(name).origin.name)  # type: ignore[attr-defined]


def compute_fingerprint(paths: Iterable[Path], packages: Iterable[str]) -> str:
    """32 hex of a SHA-256 over each file's name and bytes and each package's installed version."""
    digest = hashlib.sha256(b"knowledgeweb.fingerprint.v1\n")
    for path in paths:
        data = path.read_bytes()
        digest.update(f"{path.name}:{len(data)}\n".encode())
        digest.update(data)
    for package in packages:
        try:
            installed = version(package)
        except PackageNotFoundError:
            installed = "absent"
        digest.update(f"{package}=={installed}\n".encode())
    return digest.hexdigest()[:32]


@lru_cache(maxsize=1)
def reader_fingerprint() -> str:
    return compute_fingerprint([module_path(m) for m in READER_MODULES], READER_PACKAGES)


@lru_cache(maxsize=1)
def render_fingerprint() -> str:
    paths = [module_path(m) for m in RENDER_MODULES] + [template_path(t) for t in RENDER_TEMPLATES]
    return compute_fingerprint(paths, RENDER_PACKAGES)
