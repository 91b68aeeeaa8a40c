"""Threads and their immutable messages (SPEC §6)."""

from __future__ import annotations

from typing import Any
from uuid import uuid4

from django.conf import settings
from django.db import models

from knowledgeweb.threads.errors import MessageImmutableError


class Thread(models.Model):
    """A conversation owned by one user."""

    id = models.UUIDField(primary_key=True, default=uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="threads")
    title = models.CharField(max_length=200)
    agent_name = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Tallies kept current by the services that write messages, so that quotas and the
    # thread list never have to aggregate or render a thread's messages.
    message_count = models.PositiveIntegerField(default=0, editable=False)
    content_bytes = models.PositiveBigIntegerField(
        default=0, editable=False, help_text="UTF-8 bytes of every message's content and artifact."
    )
    citations_resolved = models.PositiveIntegerField(default=0, editable=False)
    citations_unresolved = models.PositiveIntegerField(default=0, editable=False)
    citations_malformed = models.PositiveIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["-updated_at", "-created_at"]
        indexes = [models.Index(fields=["owner", "-updated_at"], name="thread_owner_updated")]

    def __str__(self) -> str:
        return self.title


class MessageType(models.TextChoices):
    HUMAN = "human", "Human"
    AI = "ai", "AI"
    TOOL = "tool", "Tool"
    SYSTEM = "system", "System"


class MessageStatus(models.TextChoices):
    SUCCESS = "success", "Success"
    ERROR = "error", "Error"


class MessageQuerySet(models.QuerySet["Message"]):
    """Refuses bulk updates: a written message never changes."""

    def update(self, **kwargs: Any) -> int:
        raise MessageImmutableError("Messages are immutable once written; append a new message instead.")

    def bulk_update(self, objs: Any, fields: Any, batch_size: int | None = None) -> int:
        raise MessageImmutableError("Messages are immutable once written; append a new message instead.")


class Message(models.Model):
    """One message of a thread. Written once, never changed.

    Immutability is what makes memoized evidence validation sound: the cache key
    is (id, digest), and neither may ever describe two different contents.
    """

    id = models.UUIDField(primary_key=True, default=uuid4, editable=False)
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="messages")
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=16, choices=MessageType.choices)
    name = models.CharField(max_length=128, blank=True)
    tool_call_id = models.CharField(max_length=128, blank=True)
    content = models.TextField(blank=True)
    artifact = models.JSONField(null=True, blank=True)
    # What an AI message asked its tools, [{"id", "name", "args"}], and non-text content kept
    # beside the text (thinking, image placeholders...): shapes in knowledgeweb.threads.parts.
    tool_calls = models.JSONField(default=list, blank=True)
    parts = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=16, choices=MessageStatus.choices, default=MessageStatus.SUCCESS)
    digest = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = MessageQuerySet.as_manager()

    class Meta:
        ordering = ["seq"]
        constraints = [
            models.UniqueConstraint(fields=["thread", "seq"], name="message_unique_seq_per_thread"),
            models.CheckConstraint(condition=models.Q(seq__gte=1), name="message_seq_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.thread_id} #{self.seq} ({self.type})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # A guard, not logic: a row that exists may never be written again.
        if not self._state.adding:
            raise MessageImmutableError("Messages are immutable once written; append a new message instead.")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)
