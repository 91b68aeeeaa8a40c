"""Celery tasks: each runs (or resumes) one job row; the row, not the message, holds the state.

A message delivered twice (``acks_late`` after a lost worker, or a resume) finds the lease
held or the job done, or resumes after the last committed unit: tasks are idempotent.
"""

from __future__ import annotations

from celery.exceptions import SoftTimeLimitExceeded
from django.db import transaction

from knowledgeweb.jobs.models import Job
from knowledgeweb.jobs.queue import app
from knowledgeweb.jobs.services import job_fail, job_is_stalled, job_run


@app.task(name="knowledgeweb.jobs.run")
def job_run_task(job_id: int) -> bool:
    """Run the job ``job_id``; False when another worker holds its lease or it has ended."""
    try:
        return job_run(job_id=job_id)
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
