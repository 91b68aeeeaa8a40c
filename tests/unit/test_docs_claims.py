"""What the docs name in code exists in the code.

Read from the backticked spans of ``README.md`` and ``docs/*.md`` (the decision records are
history: a superseded record may name what is gone):

- dotted paths (``knowledgeweb.threads.quotas.import_precheck``, or the same below
  ``knowledgeweb`` such as ``threads.quotas``): the module imports and each remaining part
  is an attribute of it;
- file paths (``knowledgeweb/…``, ``threads/quotas.py``, ``tests/…``, ``bench/…``): the file
  or folder exists, from the root or from ``knowledgeweb/``;
- calls (``format_result()``): a function or class of that name is defined in the product;
- settings and variables (``KNOWLEDGEWEB_QUOTA_USER_BYTES``, ``RATE_LIMIT_ASK``): the name
  appears in the product, its tests or the Makefile;
- ``manage.py NAME``: the command exists (ours or Django's).
"""

from __future__ import annotations

import importlib
import re
from functools import cache
from pathlib import Path

import pytest
from django.core.management import get_commands

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ROOT / "knowledgeweb"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_SPAN = re.compile(r"`([^`\n]+)`")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$")
_FILE = re.compile(r"^(?:knowledgeweb|tests|bench|static|templates|contracts|[a-z_]+)/[\w./-]*$")
_CALL = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\(\)$")
_SETTING = re.compile(
    r"^(?:KNOWLEDGEWEB|RATE_LIMIT|QUOTA|DB|WEB|CACHE|MCP|CELERY|JOB|SECURE|READINESS)_[A-Z0-9_]*[A-Z0-9]$"
)
_COMMAND = re.compile(r"manage\.py ([a-z_]+)")
#: Names that look like code and are not: Django permission codenames.
_NOT_CODE = {"threads.view_thread", "threads.change_thread"}
#: First parts that name no module of ours: file names and other tools' dotted names.
_NOT_OURS = {
    "manage",
    "pyproject",
    "requirements",
    "json",
    "md",
    "py",
    "os",
    "sys",
    "django",
    "httpx",
    "gunicorn",
}


def spans() -> list[tuple[str, str]]:
    found = []
    for path in DOCS:
        text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
        found += [(path.name, span.strip()) for span in _SPAN.findall(text)]
    return found


@cache
def _product_text() -> str:
    files = [
        *PRODUCT.rglob("*.py"),
        *(ROOT / "tests").rglob("*.py"),
        *(ROOT / "bench").rglob("*.py"),
        ROOT / "Makefile",
    ]
    return "\n".join(path.read_text(encoding="utf-8") for path in files)


@cache
def _defined(name: str) -> bool:
    pattern = re.compile(rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b", re.M)
    return any(pattern.search(path.read_text(encoding="utf-8")) for path in PRODUCT.rglob("*.py"))


@cache
def _modules_named(name: str) -> tuple[list[str], ...]:
    """The dotted paths of product modules (or classes) called ``name``: ``ratelimit`` ->
    ``knowledgeweb.ops.ratelimit``; ``Thread`` -> ``knowledgeweb.threads.models.Thread``."""
    found = []
    for path in PRODUCT.rglob("*.py"):
        module = ["knowledgeweb", *path.relative_to(PRODUCT).with_suffix("").parts]
        if module[-1] == name:
            found.append(module)
        elif name[:1].isupper() and re.search(
            rf"^class {re.escape(name)}\b", path.read_text(encoding="utf-8"), re.M
        ):
            found.append([*module, name])
    return tuple(found)


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    if parts[0] == "knowledgeweb":
        candidates = [parts]
    else:
        candidates = [["knowledgeweb", *parts]] + [[*found, *parts[1:]] for found in _modules_named(parts[0])]
    return any(_resolves_as(names) for names in candidates)


def _resolves_as(names: list[str]) -> bool:
    for cut in range(len(names), 0, -1):
        try:
            target: object = importlib.import_module(".".join(names[:cut]))
        except ImportError:
            continue
        try:
            for attribute in names[cut:]:
                target = getattr(target, attribute)
        except AttributeError:
            return False
        return cut > 1 or len(names) == 1
    return False


def _is_module_path(span: str) -> bool:
    first = span.split(".")[0]
    if first == "knowledgeweb":
        return True
    return first not in _NOT_OURS and ((PRODUCT / first).is_dir() or bool(_modules_named(first)))


def false_claims() -> list[str]:
    problems = []
    commands = set(get_commands())
    for doc, span in spans():
        if span in _NOT_CODE:
            continue
        if _DOTTED.match(span) and _is_module_path(span) and not span.endswith((".py", ".md", ".json")):
            if not _resolves(span):
                problems.append(f"{doc}: `{span}` does not resolve to a module or a name in it")
        elif _FILE.match(span) and "<" not in span and "*" not in span and "..." not in span:
            path = span.split("::")[0].rstrip("/")
            if (ROOT / path).exists() or (PRODUCT / path).exists():
                continue
            if (
                path.split("/")[0] in {"knowledgeweb", "tests", "bench", "static", "templates", "contracts"}
                or (PRODUCT / path.split("/")[0]).is_dir()
            ):
                problems.append(f"{doc}: `{span}` does not exist")
        elif match := _CALL.match(span):
            if not _defined(match.group(1)):
                problems.append(f"{doc}: `{span}` is defined nowhere in the product")
        elif (
            _SETTING.match(span) and not span.startswith("KNOWLEDGEWEB_KEY_") and span not in _product_text()
        ):
            # A key variable's name is the admin's choice (``KNOWLEDGEWEB_KEY_OPENAI`` is an example).
            problems.append(f"{doc}: `{span}` is read nowhere")
        for command in _COMMAND.findall(span):
            if command not in commands:
                problems.append(f"{doc}: `manage.py {command}` is no command")
    return sorted(set(problems))


@pytest.mark.django_db
def test_every_name_the_docs_give_the_code_exists() -> None:
    assert false_claims() == [], "\n".join(false_claims())


def test_the_check_knows_a_false_claim() -> None:
    assert _resolves("knowledgeweb.threads.quotas.import_precheck")
    assert _resolves("threads.quotas")
    assert not _resolves("threads.quotas.no_such_function")
    assert not _resolves("knowledgeweb.no_such_module")
    assert _resolves("ratelimit.clock")
    assert _resolves("Thread.message_count")
    assert not _resolves("Thread.no_such_field")
    assert _defined("format_result")
    assert not _defined("no_such_function_anywhere")
