"""Errors of the accounts app (``knowledgeweb.errors``)."""

from __future__ import annotations

from knowledgeweb.errors import DomainError


class TokenInvalidError(DomainError, ValueError):
    """A token could not be issued as asked (for example, a name that is too long).

    Still a ``ValueError``, as callers of ``token_create`` have long caught it.
    """

    code = "invalid_request"
    status = 422
