"""Threads and their immutable messages (docs/architecture.md#data-model)."""

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
    # Resolved citations whose label names another source than the one they link
    # (``knowledge.passages.label_mismatch``), and answers that cite nothing: problems the
    # reader is walked through, counted like the verdicts (``threads.tallies``).
    citations_mismatched = models.PositiveIntegerField(default=0, editable=False)
    answers_uncited = models.PositiveIntegerField(default=0, editable=False)
    # Each cited source's number in the thread, {handle: n}, in order of first citation:
    # fixed when an answer is written (``knowledge.numbering``), read by the page, the
    # stream, the export and the citation report.
    source_numbers = models.JSONField(default=dict, blank=True, editable=False)
    # Raised by every write that changes what a page of the thread shows (an append, an
    # import, a re-render), in the same transaction: a ``StoredPage`` is served only while it
    # was assembled at the thread's current revision.
    render_revision = models.PositiveBigIntegerField(default=0, editable=False)
    # Raised with every verdict written or deleted on the thread (``threads.services.pages``,
    # from the review app's signals): 0 means the thread was never judged, and a page reads
    # no verdicts; a stored page's overlay of every verdict is served only at this revision.
    verdict_revision = models.PositiveBigIntegerField(default=0, editable=False)

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
    # What the retrieval service knows about a search it ran (hits shown of total, graph
    # edges, truncation): written only by that service (``trusted``), never taken from a
    # caller, so the viewer may present it as the server's. Null for every other message.
    tool_view = models.JSONField(null=True, blank=True, editable=False)
    # What an import found of a tool message's evidence (threads/receipts.py), written only by
    # the server: {"state": "signed", "tool", "binding", "issued_at"} when its receipt checked
    # (the evidence is read from the records with the tool the server ran), {"state":
    # "unsigned", "handles": [...]} when evidence was stripped. Null for every other message.
    evidence_check = models.JSONField(null=True, blank=True, editable=False)

    objects = MessageQuerySet.as_manager()

    class Meta:
        ordering = ["seq"]
        constraints = [
            models.UniqueConstraint(fields=["thread", "seq"], name="message_unique_seq_per_thread"),
            models.CheckConstraint(condition=models.Q(seq__gte=1), name="message_seq_positive"),
        ]
        indexes = [
            # A page window counts the questions and answers before it (its numbering goes on
            # from there): a count over this index's range, not a scan of the thread's rows.
            models.Index(fields=["thread", "type", "seq"], name="message_thread_type_seq"),
        ]

    def __str__(self) -> str:
        return f"{self.thread_id} #{self.seq} ({self.type})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # A guard, not logic: a row that exists may never be written again.
        if not self._state.adding:
            raise MessageImmutableError("Messages are immutable once written; append a new message instead.")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)


class MessageRender(models.Model):
    """What a message looks like to readers, computed once when it is written.

    A message resolves only against the messages before it, and none of them ever
    changes, so its HTML, its citation verdicts and its export text are fixed at
    write. ``renderer_version`` names the renderer that produced the row
    (``threads.rendering.version``): an older row is served as stored until
    ``manage.py rerender`` or a write to its thread replaces it, except one below
    ``MIN_SAFE_RENDERER_VERSION``, which is never served. Kept apart from
    ``Message`` so that messages stay immutable while their renders may be refreshed.
    """

    message = models.OneToOneField(Message, primary_key=True, on_delete=models.CASCADE, related_name="render")
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="renders")
    seq = models.PositiveIntegerField()
    # 0: stored before renderer versions existed (below every safe version).
    renderer_version = models.PositiveIntegerField(default=0)
    html = models.TextField(blank=True)
    # Each citation of an AI message, in order: label, href, state, reason, handle.
    citations = models.JSONField(default=list, blank=True)
    # A tool message's validated evidence (the reader's verdict), as Evidence fields.
    sources = models.JSONField(default=list, blank=True)
    # A tool message's sources-panel entries, by handle: [opening tag, body] (see ``sources``).
    entries = models.JSONField(default=dict, blank=True)
    # The message's part of the Markdown export (see ``threads.rendering.export``).
    export = models.JSONField(default=list, blank=True)
    # An answer with text that cites nothing (``threads.tallies.answer_uncited``).
    uncited = models.BooleanField(default=False)
    # The words a reader sees, as plain text (no link targets, markup or citation labels):
    # what the thread search matches. Empty for tool output, which is not searched.
    text = models.TextField(blank=True, default="")
    rendered_at = models.DateTimeField(auto_now=True)
    # The window of the thread page that shows this message (``threads.windows``): fixed when
    # the message is first written, so a window's URL keeps naming the same messages.
    window = models.PositiveIntegerField(default=1)
    # What the page sends for this message at first paint, in characters: its HTML (a tool
    # message's brief) and the panel entries of the sources it retrieved (``windows.sent_size``).
    size = models.PositiveIntegerField(default=0)
    # What the page sends of a tool message at first paint: its summary, the hits loaded on
    # expand. Empty for other messages (the page sends their ``html``).
    brief = models.TextField(blank=True, default="")
    # The walk's stops in this message (citations with no source, malformed, label mismatches,
    # an answer citing nothing): lets a window find its neighbours' problems without reading them.
    problems = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["thread", "seq"]
        indexes = [
            models.Index(fields=["thread", "seq"], name="render_thread_seq"),
            models.Index(fields=["thread", "window", "seq"], name="render_thread_window"),
            # The walk's nearest windows holding a problem: only the renders with one are read.
            models.Index(
                fields=["thread", "window"], condition=models.Q(problems__gt=0), name="render_thread_problems"
            ),
        ]

    def __str__(self) -> str:
        return f"render of {self.message_id}"


class ThreadSource(models.Model):
    """Where a source of a thread lives: the tool message that first returned it with valid
    evidence (``found``) or with evidence that failed validation (``failed``), its window, and
    what the sources panel and the citation dialog show of it.

    The stored index of a windowed page (``threads.windows``): a window reads the rows of the
    handles it cites or retrieves, never the renders of the messages it does not send. Written
    by the renders service with each tool message, rebuilt with a re-render.
    """

    FOUND = "found"
    FAILED = "failed"

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="source_places")
    handle = models.CharField(max_length=128)
    kind = models.CharField(max_length=8, default=FOUND)
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="+")
    seq = models.PositiveIntegerField()
    #: The hit's place among its message's hits (retrieval order, which jsonb would not keep).
    position = models.PositiveIntegerField(default=0)
    window = models.PositiveIntegerField(default=1)
    #: The panel entry, [opening tag, body] (``threads.rendering.sources``); empty when failed.
    entry = models.JSONField(default=list, blank=True)
    #: The validated source, as ``Evidence`` fields (``threads.evidence``); null when failed.
    evidence = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["thread", "handle", "kind"], name="thread_source_unique"),
        ]
        indexes = [models.Index(fields=["thread", "window"], name="thread_source_window")]

    def __str__(self) -> str:
        return f"{self.handle} in {self.thread_id} (window {self.window})"


class ThreadCitation(models.Model):
    """Where a source is cited, window by window: how many claims of the window cite it, and
    the first of them (its anchor and answer number).

    The other half of a windowed page's stored index: a window's sources panel links the
    claims of other windows that cite its sources from these rows, never from those windows'
    renders. Written by the renders service with each answer, rebuilt with a re-render.
    """

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="citation_places")
    handle = models.CharField(max_length=128)
    window = models.PositiveIntegerField()
    #: Claims of the window citing the source (a claim citing it twice counts twice, as the panel does).
    count = models.PositiveIntegerField(default=0)
    #: The first citing claim's hook id (``cite-<message hex>-<n>``), its message's seq and answer number.
    anchor = models.CharField(max_length=80)
    seq = models.PositiveIntegerField()
    answer = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["thread", "handle", "window"], name="thread_citation_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.handle} cited {self.count}x in window {self.window} of {self.thread_id}"


class StoredPage(models.Model):
    """The thread page's last window as every reader sees it before their own overlays
    (verdict chips, controls): assembled by the write that made it, in that write's
    transaction, and served only while ``revision`` is the thread's ``render_revision`` and
    ``renderer_version`` and ``assembly`` the running code's (docs/decisions/0108-stored-window-page.md).

    What it holds is the page's own output (sanitized message HTML, escaped panel entries),
    filled in by the page assembly (``web.rendering.stored``): the store keeps it, never reads
    into it.
    """

    thread = models.OneToOneField(
        Thread, on_delete=models.CASCADE, primary_key=True, related_name="stored_page"
    )
    revision = models.PositiveBigIntegerField()
    renderer_version = models.PositiveIntegerField()
    #: Which build of the page assembly made it (a digest of its code): a deploy that changes
    #: how a page is put together never serves a page the old code assembled.
    assembly = models.CharField(max_length=64)
    window = models.PositiveIntegerField()
    #: The window's messages as ``<li>`` items, and the panel's cited and retrieved entries.
    items = models.TextField()
    cited_html = models.TextField()
    uncited_html = models.TextField()
    #: The small rest (window numbers, seqs, turns, each message's place in ``items``, counts).
    meta = models.JSONField()
    #: ``items`` with every verdict laid over it, as a reader who sees all of them (the owner,
    #: a lead, staff) sees it, made at ``judged_revision`` of the thread's verdicts (0: none).
    judged_items = models.TextField(blank=True, default="")
    judged_revision = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"window {self.window} of {self.thread_id} at revision {self.revision}"
