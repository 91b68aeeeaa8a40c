"""Uploading documents in the admin: each file becomes a searchable document through the
ingest pipeline, run as a job (in-process here: no broker); each bad file is named with its
problem and writes nothing."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from knowledgeweb.jobs.models import Job, Upload
from knowledgeweb.library.extraction import extract
from knowledgeweb.library.models import Chunk, Collection, Document
from knowledgeweb.library.selectors import chunk_search
from knowledgeweb.library.services.documents import chunk_drafts
from tests.pdf_writer import pdf_bytes

UPLOAD_URL = "/admin/jobs/job/add/"
MARKDOWN = b"# Lighthouse keeping\n\nThe keeper trims the wick of the lamp every evening at dusk.\n"
PDF = pdf_bytes([["Tidal charts for the harbour."], ["Spring tides reach the quay twice a month."]])


# Committed for real, as in a request outside the suite: a job is sent to the queue once its
# rows are committed (transaction.on_commit), which a test's wrapping transaction would defer.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def admin_client(db: None) -> Client:
    admin = User.objects.create_superuser("admin", "admin@example.test", "admin-password-1")
    client = Client()
    client.force_login(admin)
    return client


@pytest.fixture
def collection(db: None) -> Collection:
    return Collection.objects.create(name="coast")


def counts() -> tuple[int, int, int, int]:
    return Document.objects.count(), Chunk.objects.count(), Job.objects.count(), Upload.objects.count()


def upload(client: Client, collection: Collection, *files: tuple[str, bytes]) -> Any:
    return client.post(
        UPLOAD_URL,
        {"collection": collection.pk, "documents": [SimpleUploadedFile(n, d) for n, d in files]},
        follow=True,
    )


def expected_chunks(name: str, data: bytes) -> int:
    return len(chunk_drafts(extract(PurePath(name), data)))


def test_an_upload_of_markdown_and_pdf_becomes_searchable_documents(
    admin_client: Client, collection: Collection
) -> None:
    response = upload(admin_client, collection, ("keeper.md", MARKDOWN), ("tides.pdf", PDF))

    assert response.status_code == 200
    job = Job.objects.get()
    assert (job.kind, job.state, job.total, job.done, job.failed) == ("ingest_uploads", "done", 2, 2, 0)
    assert "2 of 2 done" in response.content.decode()
    titles = set(Document.objects.filter(collection=collection).values_list("title", flat=True))
    assert titles == {"Lighthouse keeping", "tides.pdf"}
    assert Chunk.objects.count() == expected_chunks("keeper.md", MARKDOWN) + expected_chunks("tides.pdf", PDF)
    # The bytes waited in the database for the job; once stored, the document holds what is kept.
    assert set(Upload.objects.values_list("state", "data")) == {("stored", b"")}
    assert [h.title for h in chunk_search(query="wick lamp", limit=5)] == ["Lighthouse keeping"]
    [hit] = chunk_search(query="spring tides quay", limit=5)
    assert (hit.title, hit.page) == ("tides.pdf", 2)


@pytest.mark.parametrize(
    ("name", "data", "problem"),
    [
        ("notes.docx", b"PK\x03\x04 not supported", "not a supported type"),
        ("blank.md", b"   \n\n", "the file is empty"),
        ("scan.pdf", pdf_bytes([[]]), "the file has no text to index"),
    ],
)
def test_a_bad_file_is_named_with_its_problem(
    admin_client: Client,
    collection: Collection,
    name: str,
    data: bytes,
    problem: str,
) -> None:
    response = upload(admin_client, collection, (name, data))
    page = response.content.decode()
    assert f"{name}: {problem}" in page
    if problem.startswith("not a supported"):
        # Refused by the form: nothing at all is written.
        assert "Nothing was stored" in page
        assert counts() == (0, 0, 0, 0)
    else:
        # Refused by extraction in the job: the job records why; no document or chunk is
        # written, and the bytes are let go.
        assert counts()[:2] == (0, 0)
        assert list(Upload.objects.values_list("state", "problem", "data")) == [("failed", problem, b"")]
        assert Job.objects.get().failed == 1


def test_a_file_too_large_is_refused_and_nothing_is_written(
    admin_client: Client,
    collection: Collection,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("knowledgeweb.jobs.services.MAX_FILE_BYTES", 2 * 1024 * 1024)
    monkeypatch.setattr("knowledgeweb.jobs.forms.MAX_FILE_BYTES", 2 * 1024 * 1024)
    big = b"# Big\n\n" + b"word " * (2 * 1024 * 1024 // 5 + 10)
    response = upload(admin_client, collection, ("keeper.md", MARKDOWN), ("big.md", big))
    page = response.content.decode()
    assert "big.md: too large: the limit is 2 MiB" in page
    assert counts() == (0, 0, 0, 0)


def test_duplicates_are_refused_in_the_upload_and_against_the_collection(
    admin_client: Client, collection: Collection
) -> None:
    upload(admin_client, collection, ("keeper.md", MARKDOWN))
    before = counts()
    assert before[:2] == (1, expected_chunks("keeper.md", MARKDOWN))

    again = upload(admin_client, collection, ("copy.md", MARKDOWN))
    assert (
        "copy.md: a duplicate: this collection already holds this file, as &#x27;Lighthouse keeping&#x27;"
        in (again.content.decode())
    )
    twice = upload(admin_client, collection, ("tides.pdf", PDF), ("tides2.pdf", PDF))
    assert "tides2.pdf: a duplicate of another file in this upload" in twice.content.decode()
    assert counts() == before


def test_a_job_run_again_duplicates_nothing(admin_client: Client, collection: Collection) -> None:
    from knowledgeweb.jobs.services import UploadedFile, job_run, uploads_job_create

    job = uploads_job_create(collection=collection, files=[UploadedFile("keeper.md", MARKDOWN)])
    assert job_run(job_id=job.pk)
    after = counts()
    # Done: the lease cannot be taken again, and nothing is written twice.
    assert not job_run(job_id=job.pk)
    assert counts() == after


def test_a_name_holding_nul_is_refused_by_the_service(collection: Collection) -> None:
    # Django's upload parser already drops NUL from names; the service refuses it for any caller.
    from knowledgeweb.jobs.services import UploadedFile, uploads_problems

    problems = uploads_problems(collection=collection, files=[UploadedFile("a\x00b.md", MARKDOWN)])
    assert problems == [("a\x00b.md", "the file's name holds a NUL character; rename the file")]


def test_the_admin_starts_a_rerender_job(admin_client: Client, user: User) -> None:
    from knowledgeweb.threads.models import Message, MessageRender
    from knowledgeweb.threads.services import message_append, thread_create

    thread = thread_create(owner=user, title="T", agent_name="tester")
    message_append(thread=thread, type="human", content="Is **this** bold?")
    MessageRender.objects.all().delete()

    response = admin_client.post("/admin/jobs/job/rerender/", follow=True)

    assert "re-render threads #" in response.content.decode()
    job = Job.objects.get()
    assert (job.kind, job.state, job.total, job.done) == ("rerender", "done", 1, 1)
    assert MessageRender.objects.count() == Message.objects.count() == 1
    assert admin_client.get("/admin/jobs/job/rerender/").status_code == 405


def test_the_admin_resumes_a_stalled_job_where_it_stopped(
    admin_client: Client, collection: Collection
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from knowledgeweb.jobs.services import UploadedFile, uploads_job_create

    files = [UploadedFile(f"n{i}.md", f"# Note {i}\n\nText {i}.\n".encode()) for i in range(3)]
    job = uploads_job_create(collection=collection, files=files)
    # A worker took the job, stored nothing, and died: its lease has run out.
    Job.objects.filter(pk=job.pk).update(
        state="running",
        lease_owner="dead",
        lease_expires_at=timezone.now() - timedelta(seconds=1),
        attempts=1,
    )
    admin_client.post(
        "/admin/jobs/job/", {"action": "resume_stalled", "_selected_action": [job.pk]}, follow=True
    )
    done = Job.objects.get(pk=job.pk)
    assert (done.state, done.done, done.attempts) == ("done", 3, 2)
    assert Document.objects.count() == 3

    # A job that is done is not stalled: resuming it again sends nothing and writes nothing.
    response = admin_client.post(
        "/admin/jobs/job/", {"action": "resume_stalled", "_selected_action": [job.pk]}, follow=True
    )
    assert "0 job(s) sent to the queue again." in response.content.decode()
    assert Document.objects.count() == 3
