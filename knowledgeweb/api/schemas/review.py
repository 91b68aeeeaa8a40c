"""The review endpoints' schemas: items and verdicts (``api/review.py``), review queues, their
agreement, final verdicts and the dataset export (``api/review_queues.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from uuid import UUID

from ninja import Field, Schema

from knowledgeweb.api.schemas.text import StorableInput, Text
from knowledgeweb.review.models import NOTE_MAX_CHARS


class VerdictIn(StorableInput):
    verdict: Text = Field(
        max_length=64,
        description=(
            "A citation: supports, partly_supports, does_not_support, cant_tell. "
            "An answer: acceptable, needs_changes, unacceptable."
        ),
    )
    note: Text = Field(
        "", description=f"Plain text, at most {NOTE_MAX_CHARS} characters; shown escaped, never as markup."
    )


class VerdictOut(Schema):
    id: int
    kind: str
    message_id: UUID
    position: int = Field(description="The citation's number in its answer, from 1; 0 for an answer.")
    href: str
    label: str
    verdict: str
    note: str
    reviewer: str
    created_at: datetime


class ItemOut(Schema):
    key: str
    kind: str
    message_id: UUID
    position: int
    answer: int = Field(description="The answer's number among the thread's answers.")
    state: str = Field(description="resolved, unresolved or malformed for a citation; answer for an answer.")
    href: str
    label: str
    label_mismatch: bool
    uncited: bool
    judgeable: bool
    allowed: list[str] = Field(description="The verdicts this item takes, in key order (empty: none).")
    verdicts: list[VerdictOut] = Field(description="Every verdict you may see, oldest first.")
    mine: VerdictOut | None = Field(description="Your latest verdict, the one that counts.")
    hidden: int = Field(description="Reviewers whose verdicts stay hidden until you judge this item.")


class QueueOut(Schema):
    id: int
    name: str
    guidelines_html: str = Field(description="The queue's guidelines, rendered and sanitized.")


class ReviewOut(Schema):
    thread_id: UUID
    role: str = Field(description="owner, lead or reviewer.")
    reviews: bool = Field(description="Whether you record verdicts on this thread.")
    sees_all: bool = Field(description="Whether you see every reviewer's verdicts (the lead).")
    judged: int
    judgeable: int
    counts: dict[str, int]
    queues: list[QueueOut]
    items: list[ItemOut]
    orphaned: list[VerdictOut] = Field(
        description="Verdicts whose item no longer matches (position, href and label): never moved."
    )


class ReviewerProgressOut(Schema):
    reviewer: str
    items_judged: int


class ReviewQueueOut(Schema):
    id: int
    name: str
    description: str
    overlap: int = Field(description="How many different reviewers must judge each item.")
    reservation_minutes: int
    lead: str | None
    items: int
    items_done: int = Field(description="Items judged by at least `overlap` reviewers.")
    threads: int
    threads_done: int
    states: dict[str, int] = Field(
        description="Threads per state: needs review, in review, needs others, done."
    )
    per_reviewer: list[ReviewerProgressOut]


class NextOut(Schema):
    thread_id: UUID
    title: str
    expires_at: datetime
    review_url: str = Field(description="The thread's page in review mode.")


class DisputedOut(Schema):
    thread_id: UUID
    message_id: UUID
    kind: Literal["citation", "answer"]
    position: int
    label: str
    href: str
    verdicts: dict[str, str] = Field(
        description=(
            "Each reviewer's latest verdict, by username: all for the lead, else only once I judged "
            "the item myself (blind by default)."
        )
    )
    final: str | None


class AgreementOut(Schema):
    reviewers: list[str]
    units: int = Field(description="Citations judged by at least one reviewer.")
    alpha: float | None = Field(description="Krippendorff's alpha, nominal; null when undefined.")
    kappa: float | None = Field(description="Cohen's kappa, only when exactly two reviewers judged.")
    disputed: list[DisputedOut]


class FinalVerdictIn(StorableInput):
    message_id: UUID
    kind: Literal["citation", "answer"]
    position: int = Field(ge=0)
    verdict: Text
    note: Text = Field(default="", max_length=NOTE_MAX_CHARS)


class FinalVerdictOut(Schema):
    id: int
    message_id: UUID
    kind: str
    position: int
    verdict: str
    note: str
    created_at: datetime


class DatasetExportQuery(Schema):
    format: Text = Field("jsonl", description="jsonl or csv")
