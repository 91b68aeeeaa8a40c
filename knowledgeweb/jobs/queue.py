"""The Celery application, configured from Django's settings (the ``CELERY_`` ones)."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "knowledgeweb.settings")

app = Celery("knowledgeweb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.include = ["knowledgeweb.jobs.tasks"]


def broker_check() -> None:
    """Connect to the broker once; raise if it does not answer (``/readyz``)."""
    with app.connection_for_write() as connection:
        connection.ensure_connection(max_retries=1, timeout=2)
