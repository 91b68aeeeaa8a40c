"""Domain errors of the threads app, each with its code and status (``knowledgeweb.errors``)."""

from __future__ import annotations

from knowledgeweb.errors import DomainError


class ThreadsError(DomainError):
    """Base class: a request the threads app refuses, with a message fit for the caller."""

    code = "bad_request"
    status = 400


class ThreadNotFound(ThreadsError):  # noqa: N818 - the name other apps code against
    """No such thread for this user. Another user's thread is reported the same way."""

    code = "not_found"
    status = 404


class MessageInvalidError(ThreadsError):
    """A message the store refuses (unknown type, missing content, a non-text part...).

    ``position`` is the 1-based position in an import, when there is one.
    """

    code = "invalid_request"
    status = 422

    def __init__(self, message: str, *, position: int | None = None) -> None:
        self.position = position
        super().__init__(f"message {position}: {message}" if position is not None else message)


class QuotaExceededError(ThreadsError):
    """A write that would take a thread or a user past a quota; nothing was written.

    ``quota`` names the setting: ``thread_messages``, ``thread_bytes``, ``user_threads`` or ``user_bytes``.
    """

    code = "quota_exceeded"
    status = 413

    def __init__(self, message: str, *, quota: str) -> None:
        super().__init__(message)
        self.quota = quota

    def extra(self) -> dict[str, object]:
        return {"quota": self.quota}


class ThreadInvalidError(ThreadsError):
    """Thread fields the store refuses (a blank or overlong title...)."""

    code = "invalid_request"
    status = 422


class MessageImmutableError(ThreadsError):
    """An attempt to change a message that has been written."""

    code = "conflict"
    status = 409


class ExportFormatError(ThreadsError):
    """An export format other than json or markdown."""

    code = "invalid_request"
    status = 422


class ThreadCursorError(ThreadsError):
    """A thread-list cursor this app did not issue (or one too mangled to read)."""
