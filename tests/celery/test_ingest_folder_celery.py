"""``manage.py ingest --queue`` for real: the command reads a folder and sends its job to Redis;
a worker process stores it in this suite's PostgreSQL database. Sending the same folder
again duplicates no document or chunk (counted). Needs PostgreSQL and Redis, as its sibling
``test_jobs_celery.py`` (whose worker fixture it shares) says."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import override_settings

from knowledgeweb.jobs.models import Job, Upload
from knowledgeweb.jobs.queue import app
from knowledgeweb.library.models import Chunk, Document
from tests.celery.test_jobs_celery import BROKER_URL, Workers, wait_for, workers  # noqa: F401 (fixture)

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]


def _reset_connections() -> None:
    """Forget the app's cached connection pools so the next send uses the broker configured now.

    Not closed: kombu shares a broker's pool between apps (the sibling test's client uses it).
    """
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def real_queue(workers: Workers) -> Iterator[Workers]:  # noqa: F811 (the shared fixture)
    """This process's Celery app sends to Redis, on the test workers' own queue, not eagerly."""
    saved = {k: app.conf[k] for k in ("task_always_eager", "broker_url", "task_default_queue")}
    app.conf.update(task_always_eager=False, broker_url=BROKER_URL, task_default_queue=workers.queue)
    _reset_connections()
    try:
        with override_settings(TASK_BROKER_CONFIGURED=True):
            yield workers
    finally:
        app.conf.update(saved)
        _reset_connections()


def queue_folder(folder: Path) -> int:
    out = io.StringIO()
    call_command("ingest", str(folder), collection="docs", queue=True, stdout=out, stderr=io.StringIO())
    found = re.search(r"Queued job (\d+): 3 file\(s\) for collection 'docs'", out.getvalue())
    assert found, out.getvalue()
    return int(found.group(1))


def test_a_worker_runs_a_queued_folder_ingest_and_a_second_one_duplicates_nothing(
    real_queue: Workers, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(3):
        (folder / f"note-{i}.md").write_text(
            f"# Note {i}\n\nParagraph {i}.\n\nAnother {i}.\n", encoding="utf-8"
        )

    first = queue_folder(folder)
    # Sent, not run here: the job waits for the worker.
    assert Job.objects.get(pk=first).state == Job.State.QUEUED
    real_queue.start("folder")
    wait_for(
        "the folder job", lambda: Job.objects.filter(pk=first, state=Job.State.DONE).exists(), real_queue
    )
    assert Upload.objects.filter(job=first, state=Upload.State.STORED, action="created").count() == 3
    documents, chunks = Document.objects.count(), Chunk.objects.count()
    assert documents == 3
    assert chunks >= 3

    second = queue_folder(folder)
    wait_for(
        "the second job", lambda: Job.objects.filter(pk=second, state=Job.State.DONE).exists(), real_queue
    )
    assert Upload.objects.filter(job=second, state=Upload.State.STORED, action="unchanged").count() == 3
    assert (Document.objects.count(), Chunk.objects.count()) == (documents, chunks)
