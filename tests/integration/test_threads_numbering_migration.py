"""Migration threads 0008 numbers and counts the threads written before it, from their stored renders."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("threads", "0007_render_renderer_version")]
AFTER = [("threads", "0008_thread_source_numbers_and_problem_counts")]
A, B = f"knowledge-source-{'a' * 32}", f"knowledge-source-{'b' * 32}"


@pytest.mark.django_db(transaction=True)
def test_existing_threads_get_their_numbers_counters_and_search_text() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    user = old.get_model("auth", "User").objects.create(username="before-numbering")
    thread = old.get_model("threads", "Thread").objects.create(owner=user, title="Old")
    messages = old.get_model("threads", "Message")
    renders = old.get_model("threads", "MessageRender")

    def add(
        seq: int, kind: str, content: str, citations: list[dict[str, object]], tool_calls: list[object]
    ) -> None:
        message = messages.objects.create(
            id=uuid.uuid4(),
            thread=thread,
            seq=seq,
            type=kind,
            content=content,
            digest="0" * 64,
            tool_calls=tool_calls,
        )
        renders.objects.create(
            message=message,
            thread=thread,
            seq=seq,
            renderer_version=0,
            html=f"<p>{content}</p>",
            citations=citations,
        )

    resolved = {"state": "resolved", "label": "x", "href": "#", "reason": ""}
    add(1, "human", "Why [citation](#knowledge-source-x)?", [], [])
    add(
        2,
        "ai",
        "B then A",
        [{**resolved, "handle": B, "label_mismatch": True}, {**resolved, "handle": A}],
        [],
    )
    add(3, "ai", "Nothing cited.", [], [])
    add(4, "ai", "Searching.", [], [{"id": "1", "name": "search", "args": {}}])
    add(
        5,
        "ai",
        f"A again [see](#{A}) and none",
        [{**resolved, "handle": A}, {"state": "unresolved", "handle": None}],
        [],
    )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    row = new.get_model("threads", "Thread").objects.get(pk=thread.pk)
    assert row.source_numbers == {B: 1, A: 2}
    assert (row.citations_resolved, row.citations_unresolved, row.citations_malformed) == (3, 1, 0)
    assert (row.citations_mismatched, row.answers_uncited) == (1, 1)
    texts = dict(new.get_model("threads", "MessageRender").objects.values_list("seq", "text"))
    # What a reader sees: a question as written, an answer without its link targets.
    assert texts[1] == "Why [citation](#knowledge-source-x)?"
    assert texts[5] == "A again  and none"
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
