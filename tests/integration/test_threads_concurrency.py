"""Concurrent appends against the real database: seq never has a gap or a duplicate (docs/architecture.md#data-model)."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth.models import User
from django.db import connection

from knowledgeweb.threads.models import Message
from knowledgeweb.threads.services import message_append, thread_create

WORKERS = 6
APPENDS_PER_WORKER = 8


@pytest.mark.django_db(transaction=True)
def test_concurrent_appends_leave_no_gap_and_no_duplicate(user: User) -> None:
    thread = thread_create(owner=user, title="race")
    start = threading.Barrier(WORKERS)
    failures: list[BaseException] = []

    def worker(number: int) -> None:
        try:
            start.wait()
            for index in range(APPENDS_PER_WORKER):
                message_append(thread=thread, type="human", content=f"{number}-{index}")
        except BaseException as exc:  # reported below, with the assertion
            failures.append(exc)
        finally:
            connection.close()

    pool = [threading.Thread(target=worker, args=(n,)) for n in range(WORKERS)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()

    assert failures == []
    rows = list(Message.objects.filter(thread=thread).order_by("seq").values_list("seq", "content"))
    total = WORKERS * APPENDS_PER_WORKER
    assert [seq for seq, _ in rows] == list(range(1, total + 1))
    assert sorted(content for _, content in rows) == sorted(
        f"{n}-{i}" for n in range(WORKERS) for i in range(APPENDS_PER_WORKER)
    )
    # Each worker's own appends keep their order.
    for n in range(WORKERS):
        mine = [content for _, content in rows if content.startswith(f"{n}-")]
        assert mine == [f"{n}-{i}" for i in range(APPENDS_PER_WORKER)]
