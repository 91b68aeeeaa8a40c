"""Migration threads 0012 counts where the answers written before it cite each source, window
by window, from their stored renders (the same rule as a write)."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("threads", "0011_window_counts_and_problem_index")]
AFTER = [("threads", "0012_citation_places")]
A, B = f"knowledge-source-{'a' * 32}", f"knowledge-source-{'b' * 32}"


@pytest.mark.django_db(transaction=True)
def test_existing_answers_get_their_citation_places() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    user = old.get_model("auth", "User").objects.create(username="before-citation-places")
    thread = old.get_model("threads", "Thread").objects.create(owner=user, title="Old")
    messages = old.get_model("threads", "Message")
    renders = old.get_model("threads", "MessageRender")

    def add(seq: int, kind: str, window: int, citations: list[dict[str, object]]) -> str:
        message = messages.objects.create(
            id=uuid.uuid4(), thread=thread, seq=seq, type=kind, content="x", digest="0" * 64
        )
        renders.objects.create(
            message=message, thread=thread, seq=seq, renderer_version=0, html="<p>x</p>", citations=citations,
            window=window,
        )  # fmt: skip
        return message.id.hex

    def cite(handle: str, hex_id: str, n: int) -> dict[str, object]:
        return {"state": "resolved", "handle": handle, "anchor": f"cite-{hex_id}-{n}", "label": "x"}

    add(1, "human", 1, [])
    first = uuid.uuid4().hex  # the anchors name their message; any hex serves the count
    add(2, "ai", 1, [cite(A, first, 1), cite(B, first, 2), cite(A, first, 3)])
    add(3, "ai", 2, [{"state": "unresolved", "handle": None, "anchor": "cite-x-1"}])
    add(4, "ai", 2, [cite(A, "c" * 32, 1)])

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    rows = new.get_model("threads", "ThreadCitation").objects.filter(thread_id=thread.pk)
    assert sorted(rows.values_list("handle", "window", "count", "anchor", "seq", "answer")) == [
        (A, 1, 2, f"cite-{first}-1", 2, 1),
        (A, 2, 1, f"cite-{'c' * 32}-1", 4, 3),
        (B, 1, 1, f"cite-{first}-2", 2, 1),
    ]
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
