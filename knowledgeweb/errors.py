"""The one base of every domain error: a message safe to show, a stable ``code`` and an HTTP ``status``.

Every app's errors derive from ``DomainError`` (``threads.errors``, ``retrieval.errors``,
``answers.errors``, ``providers.errors``, ``composer.errors``, ``accounts.errors``), so a
surface needs one rule to answer any of them: the API's handler (``api/main.py``) answers
``{"detail": message, "code": code, **extra}`` with ``status``; the web pages use the same
status through ``web/errors.py``. docs/architecture.md#errors lists every code.

Pure Python, below every app: the providers layer imports it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar


class DomainError(Exception):
    """A request the domain refuses. ``str(exc)`` is the message, safe to store, log and show.

    ``code`` and ``status`` are class attributes that a subclass sets; an instance may carry
    a more precise code (``RetrievalRefusedError(..., code="binding_unavailable")``). ``codes``
    lists every code instances of the class may carry, each with its status: the docs'
    table and the test that walks every error class read it.
    """

    code: str = "bad_request"
    status: int = 400
    codes: ClassVar[Mapping[str, int]]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "codes" not in cls.__dict__:
            cls.codes = {str(cls.code): cls.status}

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
            if code in type(self).codes:
                self.status = type(self).codes[code]

    def __str__(self) -> str:
        return self.message

    def extra(self) -> dict[str, object]:
        """Fields the error adds to the API's body beside ``detail`` and ``code`` (none by default)."""
        return {}

    def headers(self) -> dict[str, str]:
        """HTTP headers every surface sends with the error (none by default; ``Retry-After`` for a limit)."""
        return {}


DomainError.codes = {DomainError.code: DomainError.status}
