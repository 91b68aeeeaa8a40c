"""A job row per piece of long work, and the uploaded files an ingest job reads its bytes from."""

from __future__ import annotations

from django.db import models

from knowledgeweb.library.models import MAX_COLLECTION_NAME, Collection, Document


class Job(models.Model):
    """Progress of one task, leased by the worker running it (docs/decisions/0042-tasks-uploads-and-long-work-on-celery.md)."""

    class Kind(models.TextChoices):
        INGEST_UPLOADS = "ingest_uploads", "ingest uploads"
        INGEST_FOLDER = "ingest_folder", "ingest a folder"
        RERENDER = "rerender", "re-render threads"

    class State(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    kind = models.CharField(max_length=32, choices=Kind.choices)
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED)
    collection = models.ForeignKey(Collection, null=True, blank=True, on_delete=models.CASCADE)
    # Folder ingest only: the collection to create with the first stored file (as
    # ``manage.py ingest`` does), so a run that stores nothing leaves no empty collection.
    collection_name = models.CharField(max_length=MAX_COLLECTION_NAME, blank=True)
    # Re-render only: replace every render, not only those the running renderer did not make.
    force = models.BooleanField(default=False)
    # Re-render only: the last thread done (threads are taken in primary-key order).
    cursor = models.CharField(max_length=64, blank=True)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    # Who holds the job and until when: a worker renews the lease after every unit of work
    # (its heartbeat); another worker may take the job over once the lease has run out.
    lease_owner = models.CharField(max_length=200, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} #{self.pk}"


class Upload(models.Model):
    """One uploaded file: its bytes wait here for the worker, so every worker can reach them."""

    class State(models.TextChoices):
        PENDING = "pending", "pending"
        STORED = "stored", "stored"
        FAILED = "failed", "failed"

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="uploads")
    # Position in the upload; the file's document key is derived from its name, never a path.
    ordinal = models.PositiveIntegerField()
    name = models.CharField(max_length=255)
    size = models.PositiveBigIntegerField()
    # Emptied once the file is stored or refused: the document holds what is kept.
    data = models.BinaryField()
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    problem = models.TextField(blank=True)
    document = models.ForeignKey(Document, null=True, blank=True, on_delete=models.SET_NULL)
    # Folder ingest only: the path as given on the command line, the document's re-ingest
    # key (the one ``manage.py ingest`` has always used), and what storing it did.
    path = models.TextField(blank=True)
    source_key = models.CharField(max_length=1024, blank=True)
    action = models.CharField(max_length=16, blank=True)
    chunk_count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["job_id", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["job", "ordinal"], name="jobs_upload_unique_ordinal"),
        ]

    def __str__(self) -> str:
        return self.name
