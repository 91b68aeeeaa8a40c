"""Create jobs and run them under a lease: each file or thread is one unit, committed on its own.

A unit commits together with the job's progress, under the job's row lock and only while
the worker still holds the lease; a worker that lost its lease (it stalled past it and
another took the job over) writes nothing more. Re-running a job skips every unit already
committed, and documents are keyed by ``(collection, source_key)`` and chunks by
``(document, ordinal)``, so nothing is stored twice (docs/decisions/0042-tasks-uploads-and-long-work-on-celery.md).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import PurePath

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from knowledgeweb.jobs.models import Job, Upload
from knowledgeweb.library.extraction import ExtractionError, extract, is_supported
from knowledgeweb.library.models import Collection, Document
from knowledgeweb.library.selectors import collection_by_name
from knowledgeweb.library.services.collections import collection_get_or_create
from knowledgeweb.library.services.documents import DocumentIngestResult, IngestAction
from knowledgeweb.library.services.ingest import (
    MAX_FILE_BYTES,
    FileOutcome,
    IngestError,
    ReadFile,
    extracted_store,
)
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.services.renders import thread_rerender

#: What an uploaded file's document is keyed by: its name, never a path on the server.
UPLOAD_KEY_PREFIX = "upload:"


class LeaseLostError(Exception):
    """Another worker holds the job now; this one stops without writing."""


@dataclass(frozen=True, slots=True)
class UploadedFile:
    name: str
    data: bytes


def upload_key(name: str) -> str:
    return UPLOAD_KEY_PREFIX + name


def upload_too_large() -> str:
    return f"too large: the limit is {MAX_FILE_BYTES // (1024 * 1024)} MiB"


def upload_problem(*, collection: Collection, file: UploadedFile, seen: set[str]) -> str:
    """Why ``file`` cannot be ingested before it is even read (empty when it may be).

    ``seen`` holds the content hashes of the batch's earlier files (and gains this one's).
    """
    if "\x00" in file.name:
        # No database stores NUL in text; the name would become the document's key.
        return "the file's name holds a NUL character; rename the file"
    if not is_supported(PurePath(file.name)):
        return "not a supported type (Markdown, text, HTML or PDF: .md, .markdown, .txt, .text, .html, .htm, .pdf)"
    if len(file.data) > MAX_FILE_BYTES:
        return upload_too_large()
    digest = hashlib.sha256(file.data).hexdigest()
    if digest in seen:
        return "a duplicate of another file in this upload"
    seen.add(digest)
    same = Document.objects.filter(collection=collection, content_hash=digest).first()
    if same is not None:
        return f"a duplicate: this collection already holds this file, as '{same.title}'"
    return ""


def uploads_problems(*, collection: Collection, files: Sequence[UploadedFile]) -> list[tuple[str, str]]:
    """Each file that cannot be ingested, with why; reads only the database."""
    seen: set[str] = set()
    problems = [(f.name, upload_problem(collection=collection, file=f, seen=seen)) for f in files]
    return [(name, problem) for name, problem in problems if problem]


@transaction.atomic
def uploads_job_create(*, collection: Collection, files: Sequence[UploadedFile]) -> Job:
    """A queued ingest job holding the files' bytes (checked with ``uploads_problems`` first)."""
    job = Job.objects.create(kind=Job.Kind.INGEST_UPLOADS, collection=collection, total=len(files))
    Upload.objects.bulk_create(
        [
            Upload(job=job, ordinal=i, name=f.name, size=len(f.data), data=f.data)
            for i, f in enumerate(files, start=1)
        ]
    )
    return job


@transaction.atomic
def folder_job_create(*, collection_name: str, files: Iterable[ReadFile]) -> Job:
    """A queued job holding files ``manage.py ingest`` read, keyed as ingest keys them.

    Each file is saved as it comes (one file's bytes in memory at a time); the job is seen,
    and sent, only once every row is committed. A file that could not be read is recorded
    as failed at once, with why, and no bytes. The job creates the collection, if missing,
    with its first stored file.
    """
    job = Job.objects.create(
        kind=Job.Kind.INGEST_FOLDER,
        collection=collection_by_name(name=collection_name),
        collection_name=collection_name,
    )
    for i, f in enumerate(files, start=1):
        Upload.objects.create(
            job=job,
            ordinal=i,
            name=PurePath(f.path).name[:255],
            path=f.path,
            source_key=f.key,
            size=len(f.data),
            data=f.data,
            state=Upload.State.FAILED if f.problem else Upload.State.PENDING,
            problem=f.problem,
        )
        job.total += 1
        job.failed += 1 if f.problem else 0
    job.save(update_fields=["total", "failed"])
    return job


def rerender_job_create(*, force: bool = False) -> Job:
    return Job.objects.create(kind=Job.Kind.RERENDER, force=force, total=Thread.objects.count())


def job_owner() -> str:
    """A name for this attempt at a job: unique, so two attempts never share a lease."""
    return f"{uuid.uuid4().hex}"


def job_acquire(*, job_id: int, owner: str) -> bool:
    """Take the job's lease if it is free or has run out; False if another worker holds it
    or the job has ended."""
    now = timezone.now()
    taken = (
        Job.objects.filter(pk=job_id, state__in=[Job.State.QUEUED, Job.State.RUNNING])
        .filter(Q(lease_owner="") | Q(lease_expires_at__lt=now))
        .update(
            lease_owner=owner,
            lease_expires_at=now + timedelta(seconds=settings.JOB_LEASE_SECONDS),
            heartbeat_at=now,
            state=Job.State.RUNNING,
            attempts=F("attempts") + 1,
        )
    )
    return taken == 1


def job_is_stalled(job: Job) -> bool:
    """Running, and its lease has run out: its worker died or hung."""
    return (
        job.state in {Job.State.QUEUED, Job.State.RUNNING}
        and job.lease_expires_at is not None
        and job.lease_expires_at < timezone.now()
    )


def lease_wait(*, job_id: int) -> float | None:
    """Seconds until another holder's lease on an unfinished job runs out (None: the job has
    ended, or nobody holds it)."""
    job = Job.objects.filter(pk=job_id).first()
    if job is None or job.state not in {Job.State.QUEUED, Job.State.RUNNING} or job.lease_expires_at is None:
        return None
    return max(0.0, (job.lease_expires_at - timezone.now()).total_seconds())


def _locked(job_id: int, owner: str) -> Job:
    """The job's row, locked, if ``owner`` still holds it; else ``LeaseLostError``."""
    job = Job.objects.select_for_update().get(pk=job_id)
    if job.lease_owner != owner:
        raise LeaseLostError(f"job {job_id} is held by another worker")
    return job


def _beat(job: Job, **changes: object) -> None:
    now = timezone.now()
    fields = ["heartbeat_at", "lease_expires_at", *changes]
    for name, value in changes.items():
        setattr(job, name, value)
    job.heartbeat_at = now
    job.lease_expires_at = now + timedelta(seconds=settings.JOB_LEASE_SECONDS)
    job.save(update_fields=fields)


def _finish(job_id: int, owner: str) -> None:
    with transaction.atomic():
        job = _locked(job_id, owner)
        job.state = Job.State.DONE
        job.finished_at = timezone.now()
        job.lease_owner = ""
        job.lease_expires_at = None
        if job.failed:
            job.message = f"{job.failed} of {job.total} could not be done; each says why."
        job.save(update_fields=["state", "finished_at", "lease_owner", "lease_expires_at", "message"])


def job_fail(*, job_id: int, message: str) -> None:
    """Record why a job stopped (a time limit, an error); its committed units stay."""
    Job.objects.filter(pk=job_id).update(
        state=Job.State.FAILED, message=message, finished_at=timezone.now(), lease_owner=""
    )


def folder_outcomes(job: Job) -> list[FileOutcome]:
    """Each file of a folder job as ``manage.py ingest`` reports it, in the job's order."""
    outcomes = []
    for upload in job.uploads.select_related("document").order_by("ordinal"):
        if upload.state == Upload.State.STORED and upload.document is not None:
            result = DocumentIngestResult(upload.document, IngestAction(upload.action), upload.chunk_count)
            outcomes.append(FileOutcome(upload.path, result=result))
        else:
            outcomes.append(
                FileOutcome(upload.path, problem=upload.problem or "not ingested: the job stopped")
            )
    return outcomes


def uploads_ingest(*, job_id: int, owner: str, on_unit: Callable[[], None] | None = None) -> None:
    """Ingest a job's pending uploads, one committed file at a time (the lease taken first)."""
    collection_id = Job.objects.values_list("collection_id", flat=True).get(pk=job_id)
    collection = Collection.objects.get(pk=collection_id)
    pending = Upload.objects.filter(job_id=job_id, state=Upload.State.PENDING).order_by("ordinal")
    for upload_id, name in pending.values_list("id", "name"):
        data = bytes(Upload.objects.values_list("data", flat=True).get(pk=upload_id))
        problem, extracted = "", None
        try:
            extracted = extract(PurePath(name), data)
        except ExtractionError as exc:
            problem = str(exc)
        with transaction.atomic():
            job = _locked(job_id, owner)
            upload = Upload.objects.select_for_update().get(pk=upload_id)
            if upload.state != Upload.State.PENDING:
                continue
            if extracted is not None:
                digest = hashlib.sha256(data).hexdigest()
                same = Document.objects.filter(collection=collection, content_hash=digest).first()
                if same is not None:
                    problem = f"a duplicate: this collection already holds this file, as '{same.title}'"
                else:
                    try:
                        with transaction.atomic():
                            result = extracted_store(
                                collection=collection, key=upload_key(name), data=data, extracted=extracted
                            )
                    except IngestError as exc:
                        problem = str(exc)
                    else:
                        upload.document = result.document
            upload.state = Upload.State.FAILED if problem else Upload.State.STORED
            upload.problem = problem
            upload.data = b""
            upload.save(update_fields=["state", "problem", "data", "document"])
            if problem:
                _beat(job, failed=job.failed + 1)
            else:
                _beat(job, done=job.done + 1)
        if on_unit is not None:
            on_unit()
    _finish(job_id, owner)


def folder_ingest(*, job_id: int, owner: str, on_unit: Callable[[], None] | None = None) -> None:
    """Ingest a folder job's pending files as ``manage.py ingest`` always has: each under its
    source key (re-ingesting updates or leaves it, never duplicates), one commit per file."""
    pending = Upload.objects.filter(job_id=job_id, state=Upload.State.PENDING).order_by("ordinal")
    for upload_id, name in pending.values_list("id", "name"):
        data = bytes(Upload.objects.values_list("data", flat=True).get(pk=upload_id))
        problem, extracted = "", None
        try:
            extracted = extract(PurePath(name), data)
        except ExtractionError as exc:
            problem = str(exc)
        with transaction.atomic():
            job = _locked(job_id, owner)
            upload = Upload.objects.select_for_update().get(pk=upload_id)
            if upload.state != Upload.State.PENDING:
                continue
            collection = job.collection
            if extracted is not None:
                try:
                    # A new collection commits with its first document, or not at all.
                    with transaction.atomic():
                        if collection is None:
                            collection = collection_get_or_create(name=job.collection_name)
                        result = extracted_store(
                            collection=collection, key=upload.source_key, data=data, extracted=extracted
                        )
                except IngestError as exc:
                    problem = str(exc)
                else:
                    upload.document = result.document
                    upload.action = result.action.value
                    upload.chunk_count = result.chunk_count
            upload.state = Upload.State.FAILED if problem else Upload.State.STORED
            upload.problem = problem
            upload.data = b""
            upload.save(update_fields=["state", "problem", "data", "document", "action", "chunk_count"])
            if problem:
                _beat(job, failed=job.failed + 1)
            elif job.collection_id is None and collection is not None:
                _beat(job, done=job.done + 1, collection=collection)
            else:
                _beat(job, done=job.done + 1)
        if on_unit is not None:
            on_unit()
    _finish(job_id, owner)


def threads_rerender(*, job_id: int, owner: str, on_unit: Callable[[], None] | None = None) -> None:
    """Re-render every thread in primary-key order, one committed thread at a time."""
    force = Job.objects.values_list("force", flat=True).get(pk=job_id)
    while True:
        cursor = Job.objects.values_list("cursor", flat=True).get(pk=job_id)
        threads = Thread.objects.order_by("pk")
        if cursor:
            threads = threads.filter(pk__gt=uuid.UUID(cursor))
        thread = threads.first()
        if thread is None:
            break
        with transaction.atomic():
            job = _locked(job_id, owner)
            thread_rerender(thread=thread, force=force)
            _beat(job, cursor=str(thread.pk), done=job.done + 1)
        if on_unit is not None:
            on_unit()
    _finish(job_id, owner)


RUNNERS: dict[str, Callable[..., None]] = {
    Job.Kind.INGEST_UPLOADS: uploads_ingest,
    Job.Kind.INGEST_FOLDER: folder_ingest,
    Job.Kind.RERENDER: threads_rerender,
}


def job_run(*, job_id: int, owner: str | None = None) -> bool:
    """Run (or resume) a job if its lease can be taken; False when another worker holds it."""
    owner = owner or job_owner()
    if not job_acquire(job_id=job_id, owner=owner):
        return False
    kind = Job.objects.values_list("kind", flat=True).get(pk=job_id)
    try:
        RUNNERS[kind](job_id=job_id, owner=owner)
    except LeaseLostError:
        return False
    return True
