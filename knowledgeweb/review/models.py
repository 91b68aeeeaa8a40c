"""Review queues and the verdicts reviewers record on citations and answers.

A queue grants *reading* only: its reviewers may read the threads that enter it (owned by
the queue's ``owners``, narrowed, never widened, by ``agent_names``; or added by their own
owner through ``QueueThread``). Verdicts are append-only: a reviewer's latest verdict on an
item counts, and the history stays. An item is either one citation of an AI message
(``kind="citation"``, ``position`` counting the message's citations from 1, with the href
and label it had when judged, so that a renderer counting differently later shows the
verdict as orphaned instead of moving it) or the AI message as a whole
(``kind="answer"``, ``position`` 0).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from knowledgeweb.threads.models import Message, Thread

# A note is plain text a reader may write: capped like a label, escaped wherever shown.
NOTE_MAX_CHARS = 2000


class ItemKind(models.TextChoices):
    CITATION = "citation", "Citation"
    ANSWER = "answer", "Answer"


class CitationVerdict(models.TextChoices):
    SUPPORTS = "supports", "supports"
    PARTLY_SUPPORTS = "partly_supports", "partly supports"
    DOES_NOT_SUPPORT = "does_not_support", "does not support"
    CANT_TELL = "cant_tell", "can't tell"


class AnswerVerdict(models.TextChoices):
    ACCEPTABLE = "acceptable", "acceptable"
    NEEDS_CHANGES = "needs_changes", "needs changes"
    UNACCEPTABLE = "unacceptable", "unacceptable"


VERDICT_CHOICES = [*CitationVerdict.choices, *AnswerVerdict.choices]


class AppendOnlyError(Exception):
    """A verdict, once written, is history: record a new one instead."""


class ReviewQueue(models.Model):
    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    # Markdown, rendered through the answers' sanitizer on every review screen.
    guidelines = models.TextField(blank=True)
    reviewers = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="review_queues", blank=True)
    lead = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="led_review_queues",
    )
    # Threads owned by these users enter the queue...
    owners = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="reviewed_by_queues", blank=True)
    # ...narrowed to these exact agent names when any are given. Agent names are
    # self-declared by whoever writes the thread, so they only ever narrow.
    agent_names = models.JSONField(default=list, blank=True)
    # How many different reviewers must judge each item (Review part 2).
    overlap = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(5)]
    )
    # How long "Start reviewing" holds a thread for one reviewer (Review part 2).
    reservation_minutes = models.PositiveSmallIntegerField(default=10, validators=[MinValueValidator(1)])
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(overlap__gte=1, overlap__lte=5), name="queue_overlap_1_to_5"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class QueueThread(models.Model):
    """A thread its owner added to a queue they review in."""

    queue = models.ForeignKey(ReviewQueue, on_delete=models.CASCADE, related_name="added_threads")
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="queue_entries")
    added_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["queue", "thread"], name="queue_thread_once")]

    def __str__(self) -> str:
        return f"{self.thread_id} in {self.queue_id}"


class AppendOnly(models.Model):
    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError(f"A {type(self).__name__} is never changed; record a new one.")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)


class Verdict(AppendOnly):
    """One reviewer's judgment of one item, at one time."""

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="verdicts")
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="verdicts")
    kind = models.CharField(max_length=16, choices=ItemKind.choices)
    position = models.PositiveIntegerField(
        help_text="The citation's number in its message, from 1; 0 for an answer."
    )
    href = models.CharField(max_length=2048, blank=True)
    label = models.CharField(max_length=1000, blank=True)
    value = models.CharField(max_length=32, choices=VERDICT_CHOICES)
    note = models.TextField(blank=True, max_length=NOTE_MAX_CHARS)
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="verdicts")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["thread", "reviewer"], name="verdict_thread_reviewer"),
            models.Index(fields=["message", "kind", "position"], name="verdict_item"),
        ]

    def __str__(self) -> str:
        return f"{self.value} on {self.kind} {self.message_id}#{self.position}"


class FinalVerdict(AppendOnly):
    """The queue lead's settlement of a disputed item (Review part 2); the latest counts."""

    queue = models.ForeignKey(ReviewQueue, on_delete=models.CASCADE, related_name="final_verdicts")
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="final_verdicts")
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="final_verdicts")
    kind = models.CharField(max_length=16, choices=ItemKind.choices)
    position = models.PositiveIntegerField()
    href = models.CharField(max_length=2048, blank=True)
    label = models.CharField(max_length=1000, blank=True)
    value = models.CharField(max_length=32, choices=VERDICT_CHOICES)
    note = models.TextField(blank=True, max_length=NOTE_MAX_CHARS)
    lead = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["queue", "message", "kind", "position"], name="final_item")]

    def __str__(self) -> str:
        return f"final {self.value} on {self.kind} {self.message_id}#{self.position}"


class Reservation(models.Model):
    """One of a queue's ``overlap`` reviewing slots on a thread (Review part 2).

    A slot is free when nobody holds it (``reviewer`` empty) or its holder's time ran out
    (``expires_at`` past) without finishing; a reviewer who judged every item keeps their
    slot as ``finished``, so at most ``overlap`` minus the finished reviewers hold a thread
    at once. Claiming is one conditional UPDATE of a free slot (``review.queueing``).
    """

    queue = models.ForeignKey(ReviewQueue, on_delete=models.CASCADE, related_name="reservations")
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="reservations")
    slot = models.PositiveSmallIntegerField(default=1)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    expires_at = models.DateTimeField(db_index=True)
    finished = models.BooleanField(default=False)
    # Set by each claim, so the claimer finds the row its UPDATE took.
    claim = models.UUIDField(null=True, blank=True, unique=True)

    class Meta:
        constraints = [
            # NULL reviewers (free slots) are distinct on both databases.
            models.UniqueConstraint(
                fields=["queue", "thread", "reviewer"], name="reservation_once_per_reviewer"
            ),
            models.UniqueConstraint(fields=["queue", "thread", "slot"], name="reservation_slot_once"),
        ]

    def __str__(self) -> str:
        return f"{self.thread_id} slot {self.slot} held until {self.expires_at:%H:%M}"
