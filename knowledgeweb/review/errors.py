"""Domain errors of the review app, each with its code and status (``knowledgeweb.errors``).

Who may not read a thread at all gets the threads app's ``ThreadNotFound`` (404), the same as
for a missing thread, so a review route never tells anyone what exists.
"""

from __future__ import annotations

from collections.abc import Sequence

from knowledgeweb.errors import DomainError


class ReviewError(DomainError):
    """Base class: a review request refused, with a message fit for the caller."""

    code = "bad_request"
    status = 400


class ReviewForbiddenError(ReviewError):
    """The caller may read the thread (as a reviewer, a lead or its owner) but not do this."""

    code = "forbidden"
    status = 403


class VerdictInvalidError(ReviewError):
    """A verdict the store refuses: an item that does not exist or takes no verdict, an unknown
    value, a note too long. Nothing was written."""

    code = "invalid_request"
    status = 422

    def __init__(
        self, message: str, *, item: str = "", allowed: Sequence[str] = (), code: str | None = None
    ) -> None:
        super().__init__(message, code=code)
        self.item = item
        self.allowed = tuple(allowed)

    def extra(self) -> dict[str, object]:
        extra: dict[str, object] = {}
        if self.item:
            extra["item"] = self.item
        if self.allowed:
            extra["allowed"] = list(self.allowed)
        return extra


class VerdictsPresentError(ReviewError):
    """A thread holding verdicts deleted without saying they may go with it."""

    code = "verdicts_present"
    status = 409

    def __init__(self, message: str, *, verdicts: int = 0, code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.verdicts = verdicts

    def extra(self) -> dict[str, object]:
        return {"verdicts": self.verdicts}
