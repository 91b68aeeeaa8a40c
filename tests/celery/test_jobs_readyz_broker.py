"""/readyz asks a configured broker that answers (Redis on 127.0.0.1, as the Celery tests need)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.celery.test_jobs_celery import BROKER_URL
from tests.integration.serving_support import base_env
from tests.integration.test_serving_health import probe

pytestmark = [pytest.mark.celery, pytest.mark.django_db]


def test_readyz_is_ok_with_a_broker_that_answers(tmp_path: Path) -> None:
    env = base_env(
        DEBUG="1",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        CELERY_BROKER_URL=BROKER_URL,
    )
    body = probe(env)
    assert body["body"]["checks"] == {"database": "ok", "cache": "ok", "broker": "ok"}, (
        "Redis on 127.0.0.1:6379 is the broker here; it must answer"
    )
    assert body["status"] == 200
