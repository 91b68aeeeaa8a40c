"""The Celery application `celery -A knowledgeweb worker` finds (defined in knowledgeweb.jobs.queue)."""

from knowledgeweb.jobs.queue import app

__all__ = ["app"]
