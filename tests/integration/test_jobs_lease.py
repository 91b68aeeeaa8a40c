"""A job's lease: one worker at a time; a worker that lost its lease writes nothing more."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from knowledgeweb.jobs.models import Job, Upload
from knowledgeweb.jobs.services import (
    LeaseLostError,
    UploadedFile,
    job_acquire,
    job_is_stalled,
    job_run,
    uploads_ingest,
    uploads_job_create,
)
from knowledgeweb.library.models import Chunk, Collection, Document

pytestmark = pytest.mark.django_db

FILES = [UploadedFile(f"n{i}.md", f"# Note {i}\n\nText of note {i}.\n".encode()) for i in range(3)]


def test_a_held_lease_is_not_taken_and_a_lapsed_one_is() -> None:
    job = uploads_job_create(collection=Collection.objects.create(name="c"), files=FILES)
    assert job_acquire(job_id=job.pk, owner="first")
    assert not job_acquire(job_id=job.pk, owner="second")
    assert not job_is_stalled(Job.objects.get(pk=job.pk))

    Job.objects.filter(pk=job.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert job_is_stalled(Job.objects.get(pk=job.pk))
    assert job_acquire(job_id=job.pk, owner="second")

    # The first worker wakes up: its next unit finds the lease gone and writes nothing.
    with pytest.raises(LeaseLostError):
        uploads_ingest(job_id=job.pk, owner="first")
    assert (Document.objects.count(), Chunk.objects.count()) == (0, 0)
    assert set(Upload.objects.values_list("state", flat=True)) == {"pending"}

    uploads_ingest(job_id=job.pk, owner="second")
    done = Job.objects.get(pk=job.pk)
    assert (done.state, done.done, done.attempts, done.lease_owner) == ("done", 3, 2, "")
    assert Document.objects.count() == Chunk.objects.count() == 3
    assert not job_run(job_id=job.pk)
