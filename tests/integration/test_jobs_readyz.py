"""/readyz asks the task broker when one is configured, and names it when it does not answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.serving_support import base_env, free_port
from tests.integration.test_serving_health import probe

pytestmark = pytest.mark.django_db


def test_readyz_names_a_broker_that_does_not_answer(tmp_path: Path) -> None:
    env = base_env(
        DEBUG="1",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        CELERY_BROKER_URL=f"redis://127.0.0.1:{free_port()}/0",
    )
    body = probe(env)
    assert body["status"] == 503
    assert body["body"]["failed"] == ["broker"]
    assert set(body["body"]["checks"]) == {"database", "cache", "broker"}


def test_readyz_asks_no_broker_when_tasks_run_in_process(tmp_path: Path) -> None:
    body = probe(base_env(DEBUG="1", DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}"))
    assert body["status"] == 200
    assert set(body["body"]["checks"]) == {"database", "cache"}
