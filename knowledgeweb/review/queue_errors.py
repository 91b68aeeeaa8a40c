"""Errors of queues and adjudication, each with its code and status (``knowledgeweb.errors``)."""

from __future__ import annotations

from knowledgeweb.errors import DomainError


class QueueNotFound(DomainError):  # noqa: N818 - named like ThreadNotFound, which callers know
    """No such queue for this user: one they neither review in nor lead is reported the same way."""

    code = "not_found"
    status = 404


class NotQueueLead(DomainError):  # noqa: N818 - a refusal, named for who is refused
    """A reviewer of the queue who is not its lead asked to record a final verdict."""

    code = "forbidden"
    status = 403


class FinalVerdictInvalid(DomainError):  # noqa: N818 - named for what is refused
    """A final verdict the queue refuses: an unknown item or value, or an item not disputed."""

    code = "invalid_request"
    status = 422


class ExportFormatInvalid(DomainError):  # noqa: N818 - named for what is refused
    """An export format other than jsonl or csv."""

    code = "invalid_request"
    status = 422
