"""Celery for real: worker processes on Redis run jobs against this suite's PostgreSQL database.

A worker killed (SIGKILL) mid-ingest loses nothing and duplicates nothing: a second worker
takes the job over once its lease has run out and finishes it, counted in the database.
These tests need PostgreSQL (a database every process can see) and Redis on 127.0.0.1; where
either does not answer they fail, saying so. `make pytest-postgres` runs them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path, PurePath
from typing import Any

import pytest
import redis
from celery import Celery
from django.conf import settings
from django.db import connection
from django.db.models import Count, Max, Min

from knowledgeweb.jobs.models import Job, Upload
from knowledgeweb.jobs.services import UploadedFile, job_is_stalled, rerender_job_create, uploads_job_create
from knowledgeweb.library.extraction import extract
from knowledgeweb.library.models import Chunk, Collection, Document
from knowledgeweb.library.services.documents import chunk_drafts
from knowledgeweb.threads.models import Message, MessageRender, Thread

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
BROKER_URL = os.environ.get("CELERY_TEST_BROKER_URL", "redis://127.0.0.1:6379/10")
# Short, so the second worker may take the job over soon after the first is killed.
LEASE_SECONDS = 5
DEADLINE = 120.0
FILES = 300


def _require_servers() -> None:
    if connection.vendor != "postgresql":
        pytest.fail(
            "The Celery tests need PostgreSQL, a database the worker processes can see: run them with "
            "DATABASE_URL=postgres://... (make pytest-postgres does)."
        )
    try:
        redis.Redis.from_url(BROKER_URL, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        pytest.fail(f"The Celery tests need Redis as the broker ({BROKER_URL}); it did not answer ({exc}).")


def _database_url() -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Workers:
    """Starts worker processes on one queue of its own and sends them jobs."""

    def __init__(self, tmp: Path) -> None:
        self.queue = f"kw-test-{uuid.uuid4().hex}"
        self.tmp = tmp
        self.started: list[subprocess.Popen[bytes]] = []
        self.client = Celery("kw-test", broker=BROKER_URL)
        self.client.conf.broker_transport_options = settings.CELERY_BROKER_TRANSPORT_OPTIONS

    def start(self, name: str) -> subprocess.Popen[bytes]:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "DATABASE_URL": _database_url(),
            "CELERY_BROKER_URL": BROKER_URL,
            "JOB_LEASE_SECONDS": str(LEASE_SECONDS),
        }
        log = (self.tmp / f"{name}.log").open("wb")
        # The solo pool runs the task in the worker's own process, so SIGKILL stops the task too.
        process = subprocess.Popen(  # noqa: S603 (our own command line)
            [sys.executable, "-m", "celery", "-A", "knowledgeweb", "worker", "--pool=solo", "-Q", self.queue,
             "-n", f"{name}-{self.queue}@%h", "--without-gossip", "--without-mingle", "--loglevel=INFO"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.started.append(process)
        return process

    def ready(self, name: str) -> bool:
        """Whether worker ``name`` is consuming its queue (celery logs "ready." once it is)."""
        log = self.tmp / f"{name}.log"
        return log.exists() and " ready." in log.read_text(errors="replace")

    def send(self, job: Job) -> None:
        self.client.send_task("knowledgeweb.jobs.run", args=[job.pk], queue=self.queue)

    def output(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-3000:] for p in sorted(self.tmp.glob("*.log")))

    def stop(self) -> None:
        for process in self.started:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self._forget_queue()

    def _forget_queue(self) -> None:
        """Leave nothing of this test's queue in Redis: a killed worker's message waits there,
        unacknowledged, for the visibility timeout (hours) otherwise."""
        server = redis.Redis.from_url(BROKER_URL)
        server.delete(self.queue, f"_kombu.binding.{self.queue}", f"_kombu.binding_permanent.{self.queue}")
        for tag, payload in server.hgetall("unacked").items():
            if self.queue.encode() in payload:
                server.hdel("unacked", tag)
                server.zrem("unacked_index", tag)


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Workers]:
    _require_servers()
    pool = Workers(tmp_path)
    yield pool
    pool.stop()


def wait_for(what: str, check: Callable[[], Any], workers: Workers) -> Any:
    """Poll the database until ``check`` holds; fail with the workers' output after the deadline."""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        for process in workers.started:
            if process.poll() not in (None, -signal.SIGKILL, 0):
                pytest.fail(
                    f"a worker exited ({process.returncode}) while waiting for {what}:\n{workers.output()}"
                )
        time.sleep(0.02)
    pytest.fail(f"no {what} within {DEADLINE:g} s:\n{workers.output()}")


def markdown_file(i: int) -> UploadedFile:
    paragraphs = [
        f"Paragraph {p} of note {i}: " + " ".join(f"w{i}x{p}x{n}" for n in range(120)) for p in range(12)
    ]
    return UploadedFile(f"note-{i:03}.md", (f"# Note {i}\n\n" + "\n\n".join(paragraphs) + "\n").encode())


def test_a_worker_killed_mid_ingest_loses_and_duplicates_nothing(workers: Workers) -> None:
    collection = Collection.objects.create(name="notes")
    files = [markdown_file(i) for i in range(FILES)]
    expected = {
        f"Note {i}": len(chunk_drafts(extract(PurePath(f.name), f.data))) for i, f in enumerate(files)
    }
    job = uploads_job_create(collection=collection, files=files)

    first = workers.start("first")
    workers.send(job)
    wait_for("the first worker to take the job", lambda: Job.objects.get(pk=job.pk).done >= 1, workers)
    # The second worker is up before the first dies, so the job sent again below reaches it
    # within the dead worker's lease however slowly a loaded machine starts a worker.
    workers.start("second")
    wait_for("the second worker to be ready", lambda: workers.ready("second"), workers)
    wait_for("progress from the first worker", lambda: Job.objects.get(pk=job.pk).done >= 3, workers)
    first.send_signal(signal.SIGKILL)
    first.wait()
    killed = Job.objects.get(pk=job.pk)
    assert killed.state == Job.State.RUNNING
    assert 3 <= killed.done < FILES, "the first worker must be killed mid-way for this test to mean anything"
    assert Document.objects.count() == killed.done

    # Sent again at once (as a redelivery or the admin's resume would): the second worker finds
    # the dead worker's lease still held, comes back when it runs out, and takes the job over.
    assert not job_is_stalled(killed)
    workers.send(job)
    done = wait_for(
        "the job to finish", lambda: Job.objects.filter(pk=job.pk, state=Job.State.DONE).first(), workers
    )

    assert (done.done, done.failed, done.attempts) == (FILES, 0, 2)
    # The second delivery met the live lease first and came back for it.
    assert "Retry in" in (workers.tmp / "second.log").read_text()
    assert Upload.objects.filter(job=job, state=Upload.State.STORED).count() == FILES
    documents = Document.objects.filter(collection=collection)
    assert documents.count() == FILES
    per_document = {
        row["title"]: (row["n"], row["low"], row["high"])
        for row in documents.values("title").annotate(
            n=Count("chunks"), low=Min("chunks__ordinal"), high=Max("chunks__ordinal")
        )
    }
    # Every document has exactly its chunks: none lost, none twice (ordinals 1..n, n as extracted).
    assert per_document == {title: (n, 1, n) for title, n in expected.items()}
    assert Chunk.objects.count() == sum(expected.values())


def test_a_worker_rerenders_stored_messages(workers: Workers, thread: Thread, user: Any) -> None:
    from knowledgeweb.threads.services import message_append, thread_create

    other = thread_create(owner=user, title="Another", agent_name="tester")
    for t in (thread, other):
        message_append(thread=t, type="human", content="What is **bold**?")
        message_append(thread=t, type="ai", content="Text in `code` and *emphasis*.")
    MessageRender.objects.all().delete()
    job = rerender_job_create()

    workers.start("renderer")
    workers.send(job)
    done = wait_for(
        "the re-render", lambda: Job.objects.filter(pk=job.pk, state=Job.State.DONE).first(), workers
    )

    assert (done.total, done.done) == (2, 2)
    assert MessageRender.objects.count() == Message.objects.count() == 4
