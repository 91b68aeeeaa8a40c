"""One error model: every domain error has one status and one code, on the API and on the pages.

The classes are discovered, not listed: every ``errors`` module of the project is imported
and every subclass of ``DomainError`` walked, each with every code its instances may carry.
A new error class with a constructor of its own fails here until it is given an example.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import RequestFactory

import knowledgeweb
from knowledgeweb.answers.errors import AnswerError
from knowledgeweb.api.main import api
from knowledgeweb.composer.errors import ModelError, ModelFault
from knowledgeweb.errors import DomainError
from knowledgeweb.mcp_server.errors import error_body
from knowledgeweb.ops.apierrors import CODES
from knowledgeweb.ops.ratelimit import RateLimited
from knowledgeweb.providers.errors import ProviderErrorCode, ProviderHTTPError
from knowledgeweb.threads.errors import MessageInvalidError, QuotaExceededError
from knowledgeweb.threads.models import Thread
from knowledgeweb.web.errors import error_json, error_page, error_status

MESSAGE = "A message fit for the caller."


def _error_modules() -> list[str]:
    names = [
        module.name
        for module in pkgutil.walk_packages(knowledgeweb.__path__, "knowledgeweb.")
        if module.name.rsplit(".", 1)[-1] == "errors"
    ]
    for name in names:
        importlib.import_module(name)
    return names


def _subclasses(cls: type[DomainError]) -> Iterator[type[DomainError]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _domain_errors() -> list[type[DomainError]]:
    _error_modules()
    # Only the project's own: a test may define a subclass of its own.
    found = {cls for cls in _subclasses(DomainError) if cls.__module__.startswith("knowledgeweb.")}
    return [DomainError, *sorted(found, key=lambda c: (c.__module__, c.__qualname__))]


#: How to build an error whose constructor is its own (found by the class that defines
#: ``__init__``); any other is ``cls(MESSAGE, code=code)``.
_EXAMPLES: dict[type[DomainError], Callable[[type[Any], str], DomainError]] = {
    AnswerError: lambda cls, code: cls(MESSAGE, kind=code.removeprefix("ask_")),
    ModelError: lambda cls, code: cls(ModelFault(code), MESSAGE),
    ProviderHTTPError: lambda cls, code: cls(
        MESSAGE, status=502 if code == ProviderErrorCode.SERVER_ERROR else 404
    ),
    QuotaExceededError: lambda cls, code: cls(MESSAGE, quota="thread_bytes"),
    MessageInvalidError: lambda cls, code: cls(MESSAGE),
    RateLimited: lambda cls, code: cls("search", 7),
}


def _example(cls: type[DomainError], code: str) -> DomainError:
    defining = next(klass for klass in cls.__mro__ if "__init__" in vars(klass))
    if defining in _EXAMPLES:
        return _EXAMPLES[defining](cls, code)
    return cls(MESSAGE, code=code)


def _cases() -> list[tuple[type[DomainError], str, int]]:
    return [(cls, code, status) for cls in _domain_errors() for code, status in cls.codes.items()]


def test_every_apps_errors_derive_from_the_one_base() -> None:
    modules = _error_modules()
    assert {
        "knowledgeweb.threads.errors",
        "knowledgeweb.retrieval.errors",
        "knowledgeweb.answers.errors",
    } <= set(modules)
    for name in modules:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Exception) and value.__module__ == name:
                assert issubclass(value, DomainError), f"{name}.{value.__name__} is not a DomainError"


def test_the_walk_finds_every_family() -> None:
    names = {cls.__name__ for cls in _domain_errors()}
    for family in ("ThreadsError", "RetrievalError", "AnswerError", "ProviderError", "ModelError"):
        assert family in names
    assert "TokenInvalidError" in names
    assert len(_cases()) > 60


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("cls", "code", "status"), _cases(), ids=lambda value: getattr(value, "__name__", value)
)
def test_one_domain_error_has_one_status_and_code_on_every_surface(
    cls: type[DomainError], code: str, status: int, thread: Thread, user: User
) -> None:
    exc = _example(cls, code)
    assert (exc.code, exc.status, str(exc)) == (code, status, exc.message)
    assert 400 <= status < 500

    request = RequestFactory().get("/")
    request.user = user
    api_response = api.on_exception(request, exc)
    api_body = json.loads(api_response.content)
    json_response = error_json(exc)
    json_body = json.loads(json_response.content)
    page = error_page(request, "web/thread_ask_error.html", {"thread": thread}, exc)
    tool_error = error_body(exc)  # an MCP tool's refusal

    assert (
        api_response.status_code
        == json_response.status_code
        == page.status_code
        == error_status(exc)
        == tool_error["status"]
        == status
    )
    assert api_body["code"] == json_body["code"] == tool_error["code"] == code
    assert api_body["detail"] == json_body["error"] == exc.message
    assert exc.message in page.content.decode()


def test_a_quota_keeps_its_field_in_the_api_body() -> None:
    exc = QuotaExceededError(MESSAGE, quota="user_threads")
    body = json.loads(api.on_exception(RequestFactory().get("/"), exc).content)
    assert body == {"detail": MESSAGE, "code": "quota_exceeded", "quota": "user_threads"}


def test_headers_an_error_names_are_sent_by_the_api_and_the_pages() -> None:
    class LimitedError(DomainError):
        code = "rate_limited"
        status = 429

        def headers(self) -> dict[str, str]:
            return {"Retry-After": "7"}

    exc = LimitedError(MESSAGE)
    assert api.on_exception(RequestFactory().get("/"), exc)["Retry-After"] == "7"
    assert error_json(exc)["Retry-After"] == "7"


def test_every_code_a_module_passes_is_declared_by_an_error_class() -> None:
    declared = {code for cls in _domain_errors() for code in cls.codes}
    root = Path(knowledgeweb.__path__[0])
    passed = {
        (path.relative_to(root).as_posix(), code)
        for path in root.rglob("*.py")
        for code in re.findall(r'\bcode="([a-z_]+)"', path.read_text())
    }
    assert passed, "the scan found the retrieval refusals' codes"
    assert {(path, code) for path, code in passed if code not in declared} == set()


# The error-code table in docs/architecture.md#errors, generated from the classes.
_BEGIN = "<!-- error codes: generated by tests/integration/test_error_model.py -->"
_END = "<!-- end of error codes -->"


def error_code_table() -> str:
    rows = ["| status | code | raised as |", "|---|---|---|"]
    owners: dict[tuple[int, str], list[str]] = {}
    for cls in _domain_errors():
        if cls is DomainError:
            continue
        for code, status in cls.codes.items():
            owners.setdefault((status, code), []).append(f"`{cls.__name__}`")
    for status, code in CODES.items():
        owners.setdefault((status, code), []).append("the API, for this status")
    for (status, code), names in sorted(owners.items()):
        # The classes of one family share their parent's codes: name the first few.
        shown = names if len(names) <= 3 else [*names[:2], f"and {len(names) - 2} more"]
        rows.append(f"| {status} | `{code}` | {', '.join(shown)} |")
    return "\n".join(rows)


def test_the_docs_list_every_error_code_with_its_status() -> None:
    text = (Path(settings.BASE_DIR) / "docs" / "architecture.md").read_text()
    assert _BEGIN in text
    assert _END in text
    documented = text.split(_BEGIN, 1)[1].split(_END, 1)[0].strip()
    assert documented == error_code_table(), "regenerate the table:\n" + error_code_table()
