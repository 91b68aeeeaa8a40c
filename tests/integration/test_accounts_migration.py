"""Moving ApiToken from threads to accounts keeps every token: only Django's state changes."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("threads", "0003_backfill_thread_tallies")]
AFTER = [("threads", "0004_apitoken_moves_to_accounts"), ("accounts", "0001_initial")]


@pytest.mark.django_db(transaction=True)
def test_tokens_issued_before_the_move_still_authenticate_after_it() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old_apps = executor.loader.project_state(BEFORE).apps
    users = old_apps.get_model("auth", "User")
    old_tokens = old_apps.get_model("threads", "ApiToken")
    user = users.objects.create(username="before-the-move", is_active=True)
    old_tokens.objects.create(user=user, name="laptop", prefix="kwt_abc", digest="d" * 64)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new_apps = executor.loader.project_state(AFTER).apps
    new_tokens = new_apps.get_model("accounts", "ApiToken")

    assert list(new_tokens.objects.values_list("name", "digest", "user__username")) == [
        ("laptop", "d" * 64, "before-the-move")
    ]
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
