"""Domain errors of the threads app. The API maps each to one JSON 4xx response."""

from __future__ import annotations


class ThreadsError(Exception):
    """Base class: a request the threads app refuses, with a message fit for the caller."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ThreadNotFound(ThreadsError):  # noqa: N818 - the name other apps code against
    """No such thread for this user. Another user's thread is reported the same way."""


class MessageInvalidError(ThreadsError):
    """A message the store refuses (unknown type, missing content, a non-text part...).

    ``position`` is the 1-based position in an import, when there is one.
    """

    def __init__(self, message: str, *, position: int | None = None) -> None:
        self.position = position
        super().__init__(f"message {position}: {message}" if position is not None else message)


class QuotaExceededError(ThreadsError):
    """A write that would take a thread or a user past a quota; nothing was written (API: 413).

    ``quota`` names the setting: ``thread_messages``, ``thread_bytes``, ``user_threads`` or ``user_bytes``.
    """

    def __init__(self, message: str, *, quota: str) -> None:
        super().__init__(message)
        self.quota = quota


class ThreadInvalidError(ThreadsError):
    """Thread fields the store refuses (a blank or overlong title...)."""


class MessageImmutableError(ThreadsError):
    """An attempt to change a message that has been written."""


class ExportFormatError(ThreadsError):
    """An export format other than json or markdown."""


class ThreadCursorError(ThreadsError):
    """A thread-list cursor this app did not issue (or one too mangled to read)."""
