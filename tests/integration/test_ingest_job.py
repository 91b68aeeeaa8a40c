"""``manage.py ingest`` runs through a folder-ingest job: the files are read where the command
runs, their bytes and source keys stored in the job's upload rows, and the job task stores
them. Re-running duplicates nothing; a bad file is recorded and writes nothing; ``--queue``
without a broker is refused before anything is read or written."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from knowledgeweb.jobs.management.commands.ingest import NO_BROKER
from knowledgeweb.jobs.models import Job, Upload
from knowledgeweb.library.models import Chunk, Collection, Document

# Committed for real, as when the command runs outside the suite.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\nFirst paragraph.\n\nSecond paragraph.\n", encoding="utf-8")
    (docs / "b.txt").write_text("Beta\n\nSome plain text.\n", encoding="utf-8")
    return docs


def ingest(*paths: Path, **options: object) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("ingest", *map(str, paths), collection="docs", stdout=out, stderr=err, **options)
    return out.getvalue(), err.getvalue()


def counts() -> tuple[int, int, int]:
    return Collection.objects.count(), Document.objects.count(), Chunk.objects.count()


def test_the_command_creates_a_folder_job_with_a_state_per_file(folder: Path) -> None:
    out, _ = ingest(folder)
    job = Job.objects.get()
    assert (job.kind, job.state, job.total, job.done, job.failed) == (
        Job.Kind.INGEST_FOLDER,
        Job.State.DONE,
        2,
        2,
        0,
    )
    assert job.collection == Collection.objects.get(name="docs")
    uploads = list(job.uploads.order_by("ordinal"))
    assert [(u.name, u.state, u.action) for u in uploads] == [
        ("a.md", Upload.State.STORED, "created"),
        ("b.txt", Upload.State.STORED, "created"),
    ]
    # The keys ingest has always used: the path from the working directory, or absolute.
    assert [u.source_key for u in uploads] == [(folder / "a.md").as_posix(), (folder / "b.txt").as_posix()]
    assert {d.source_key for d in Document.objects.all()} == {u.source_key for u in uploads}
    assert all(bytes(u.data) == b"" for u in uploads)
    assert [u.chunk_count for u in uploads] == [
        Chunk.objects.filter(document=u.document_id).count() for u in uploads
    ]
    assert f"created   {folder / 'a.md'}" in out


def test_re_running_the_command_duplicates_no_document_or_chunk(folder: Path) -> None:
    ingest(folder)
    first = counts()
    assert first[1] == 2
    assert first[2] > 0
    out, _ = ingest(folder)
    assert counts() == first
    assert "0 created, 0 updated, 2 unchanged" in out
    (folder / "a.md").write_text("# Alpha\n\nRewritten.\n", encoding="utf-8")
    out, _ = ingest(folder)
    assert "0 created, 1 updated, 1 unchanged" in out
    assert Document.objects.count() == 2
    assert Job.objects.filter(kind=Job.Kind.INGEST_FOLDER, state=Job.State.DONE).count() == 3


def test_a_bad_file_is_reported_recorded_and_writes_nothing(folder: Path) -> None:
    (folder / "empty.md").write_bytes(b"")
    big = folder / "huge.txt"
    with big.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024 + 1)
    out = io.StringIO()
    err = io.StringIO()
    with pytest.raises(CommandError, match="2 file\\(s\\) were skipped"):
        call_command("ingest", str(folder), collection="docs", stdout=out, stderr=err)
    assert f"Skipped {folder / 'empty.md'}:" in err.getvalue()
    assert f"Skipped {folder / 'huge.txt'}: the file is larger than 50 MiB" in err.getvalue()
    assert set(Document.objects.values_list("title", flat=True)) == {"Alpha", "Beta"}
    job = Job.objects.get()
    assert (job.done, job.failed) == (2, 2)
    failed = job.uploads.filter(state=Upload.State.FAILED).order_by("ordinal")
    assert [(u.name, u.document_id, bytes(u.data)) for u in failed] == [
        ("empty.md", None, b""),
        ("huge.txt", None, b""),
    ]
    assert all(u.problem for u in failed)


def test_a_run_that_stores_nothing_creates_no_collection(tmp_path: Path) -> None:
    (tmp_path / "empty.md").write_bytes(b"")
    with pytest.raises(CommandError):
        ingest(tmp_path / "empty.md")
    assert counts() == (0, 0, 0)
    assert Job.objects.get().collection is None


def test_queue_without_a_broker_is_refused_before_anything_is_read_or_written(folder: Path) -> None:
    with pytest.raises(CommandError) as caught:
        ingest(folder, queue=True)
    assert str(caught.value) == NO_BROKER
    assert "CELERY_BROKER_URL" in NO_BROKER
    assert counts() == (0, 0, 0)
    assert Job.objects.count() == 0
    assert Upload.objects.count() == 0


def test_the_admin_job_page_shows_each_file_of_a_folder_job(folder: Path) -> None:
    from django.contrib.auth.models import User
    from django.test import Client
    from django.utils.html import escape

    (folder / "empty.md").write_bytes(b"")
    with pytest.raises(CommandError):
        ingest(folder)
    job = Job.objects.get()
    client = Client()
    client.force_login(User.objects.create_superuser("admin", "admin@example.test", "admin-password-1"))
    page = client.get(f"/admin/jobs/job/{job.pk}/change/").content.decode()
    assert "ingest a folder" in page
    assert "2 of 3 done, 1 failed" in client.get("/admin/jobs/job/").content.decode()
    for upload in job.uploads.filter(state=Upload.State.STORED):
        assert escape(upload.source_key) in page
    failed = job.uploads.get(state=Upload.State.FAILED)
    assert failed.name == "empty.md"
    assert failed.problem
    assert escape(failed.problem) in page


class WorkerDiedError(Exception):
    """Stands for a worker dying between two committed files."""


def test_a_folder_job_stopped_mid_way_is_resumed_by_another_worker_without_duplicates(folder: Path) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from knowledgeweb.jobs.services import folder_ingest, folder_job_create, job_acquire, job_run
    from knowledgeweb.library.services.ingest import paths_read

    (folder / "c.md").write_text("# Gamma\n\nThird.\n", encoding="utf-8")
    files, _ = paths_read(paths=[folder], key_root=Path.cwd())
    job = folder_job_create(collection_name="docs", files=files)
    assert job_acquire(job_id=job.pk, owner="first")

    def die() -> None:
        raise WorkerDiedError

    with pytest.raises(WorkerDiedError):
        folder_ingest(job_id=job.pk, owner="first", on_unit=die)
    assert Document.objects.count() == 1
    # The first worker's lease runs out; another takes the job and resumes after its file.
    Job.objects.filter(pk=job.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert job_run(job_id=job.pk, owner="second")

    job.refresh_from_db()
    assert (job.state, job.done, job.failed, job.attempts) == (Job.State.DONE, 3, 0, 2)
    assert Document.objects.count() == 3
    assert list(job.uploads.values_list("action", flat=True).order_by("ordinal")) == ["created"] * 3
    for document in Document.objects.all():
        ordinals = list(document.chunks.values_list("ordinal", flat=True).order_by("ordinal"))
        assert ordinals == list(range(1, len(ordinals) + 1))
