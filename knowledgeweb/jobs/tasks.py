"""Celery tasks: each runs (or resumes) one job row; the row, not the message, holds the state.

A message delivered twice (``acks_late`` after a lost worker, or a resume) finds the lease
held or the job done, or resumes after the last committed unit: tasks are idempotent.
"""

from __future__ import annotations

from typing import Any

from celery.exceptions import Retry, SoftTimeLimitExceeded
from django.db import transaction

from knowledgeweb.jobs.models import Job
from knowledgeweb.jobs.queue import app
from knowledgeweb.jobs.services import job_fail, job_is_stalled, job_run, lease_wait

#: A delivery that finds the lease held tries again when it runs out, this many times at most.
LEASE_RETRIES = 100


@app.task(name="knowledgeweb.jobs.run", bind=True, max_retries=LEASE_RETRIES)
def job_run_task(self: Any, job_id: int) -> bool:
    """Run the job ``job_id``; False when it has ended.

    A delivery that finds another worker's lease (a prefork child killed and its task
    redelivered at once, or a resume sent early) comes back when that lease runs out: if
    the holder is alive it will have renewed the lease, if not this delivery takes the job.
    """
    try:
        if job_run(job_id=job_id):
            return True
        wait = lease_wait(job_id=job_id)
        if wait is None or self.app.conf.task_always_eager:
            return False
        raise self.retry(countdown=wait + 1)
    except Retry:
        raise
    except SoftTimeLimitExceeded:
        job_fail(job_id=job_id, message="stopped at the task time limit (CELERY_TASK_TIME_LIMIT)")
        raise
    except Exception as exc:
        # What was committed stays; the admin sees why the rest was not done.
        job_fail(job_id=job_id, message=f"stopped by an unexpected error ({type(exc).__name__})")
        raise


def job_enqueue(job: Job) -> None:
    """Send the job to the queue once its row is committed (in-process without a broker)."""
    transaction.on_commit(lambda: job_run_task.delay(job.pk))


def job_resume(job: Job) -> bool:
    """Send a stalled job (its lease ran out) to the queue again; False if it is not stalled."""
    if not job_is_stalled(job):
        return False
    job_run_task.delay(job.pk)
    return True
