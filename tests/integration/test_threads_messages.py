"""Appending messages: validation, the trust boundary, digests and immutability."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from knowledgeweb.threads.errors import (
    MessageImmutableError,
    MessageInvalidError,
    ThreadInvalidError,
    ThreadNotFound,
)
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.selectors import thread_get_for_owner, thread_list_for_owner, thread_messages
from knowledgeweb.threads.services import message_append, message_digest, thread_create

pytestmark = pytest.mark.django_db

RESERVED = {
    "knowledge_sources": [{"id": "x"}],
    "knowledge_sources_version": 1,
    "retrieval_sources": [{"id": "y"}],
}


def test_it_numbers_messages_from_one_in_order(thread: Thread) -> None:
    for text in ("q", "a", "q2"):
        message_append(thread=thread, type="human", content=text)
    assert [(m.seq, m.content) for m in thread_messages(thread=thread)] == [(1, "q"), (2, "a"), (3, "q2")]


def test_it_strips_all_reserved_keys_from_a_caller_artifact_and_keeps_the_others(thread: Thread) -> None:
    supplied = {**RESERVED, "trace_id": "t-1", "nested": {"knowledge_sources": "kept: not top level"}}
    message = message_append(
        thread=thread, type="tool", name="knowledge_search", content="c", artifact=supplied
    )
    stored = Message.objects.get(pk=message.pk)
    assert stored.artifact == {"trace_id": "t-1", "nested": {"knowledge_sources": "kept: not top level"}}
    assert supplied["knowledge_sources_version"] == 1, "the caller's dict is not mutated"


def test_it_keeps_reserved_keys_only_for_a_trusted_producer(thread: Thread) -> None:
    message = message_append(thread=thread, type="tool", content="c", artifact=dict(RESERVED), trusted=True)
    assert Message.objects.get(pk=message.pk).artifact == RESERVED


def test_it_records_a_digest_of_the_stored_content_and_artifact(thread: Thread) -> None:
    message = message_append(thread=thread, type="tool", content="c", artifact={"a": 1, **RESERVED})
    assert message.digest == message_digest(content="c", artifact={"a": 1})
    assert message.digest != message_digest(content="c", artifact={"a": 2})
    assert message.digest != message_digest(content="d", artifact={"a": 1})


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"type": "robot", "content": "x"}, "unknown message type 'robot'"),
        ({"type": "ai", "content": None}, "content must be a string"),
        (
            {"type": "human", "content": "x", "tool_calls": [{"id": "1", "name": "t", "args": {}}]},
            "only an ai message carries tool calls, not a human message",
        ),
        (
            {"type": "ai", "content": "x", "tool_calls": [{"id": "1", "name": "t"}]},
            "tool call 1 must be an object with exactly 'id', 'name', 'args'",
        ),
        (
            {"type": "ai", "content": "x", "tool_calls": [{"id": "1", "name": "t" * 129, "args": {}}]},
            "tool call 1: 'name' is longer than 128 characters",
        ),
        (
            {"type": "ai", "content": "x", "parts": [{"type": "image", "media_type": "image/png"}]},
            "part 1 (image) must hold exactly 'type', 'media_type', 'url'",
        ),
        (
            {"type": "ai", "content": "x", "parts": [{"type": "script", "text": "x"}]},
            "part 1 must be an object whose 'type' is one of thinking, redacted_thinking",
        ),
        (
            {"type": "ai", "content": "x", "parts": [{"type": "thinking", "text": "a\x00"}]},
            "parts contains a NUL character",
        ),
        ({"type": "ai", "content": "x", "status": "done"}, "status"),
        ({"type": "tool", "content": "x", "name": "n" * 129}, "name"),
        ({"type": "ai", "content": "a\x00b"}, "content contains a NUL character (U+0000)"),
        ({"type": "tool", "content": "x", "artifact": {"k\x00": 1}}, "artifact contains a NUL character"),
        ({"type": "ai", "content": "a\ud800b"}, "content contains an unpaired surrogate (U+D800)"),
        ({"type": "tool", "content": "x", "name": "\udfff"}, "name contains an unpaired surrogate (U+DFFF)"),
        (
            {"type": "tool", "content": "x", "artifact": {"k": [{"\udc00": 1}]}},
            "artifact contains an unpaired surrogate (U+DC00)",
        ),
        (
            {"type": "tool", "content": "x", "artifact": {"k": [1, float("nan")]}},
            "artifact holds NaN, which is not a JSON number.",
        ),
        (
            {"type": "tool", "content": "x", "artifact": {"k": float("-inf")}},
            "artifact holds -Infinity, which is not a JSON number.",
        ),
    ],
)
def test_it_refuses_an_invalid_message_and_writes_nothing(thread: Thread, fields: dict, error: str) -> None:
    with pytest.raises(MessageInvalidError) as caught:
        message_append(thread=thread, **fields)
    assert error in str(caught.value)
    assert Message.objects.count() == 0


def test_an_artifact_may_nest_100_levels_and_no_deeper(thread: Thread) -> None:
    def nested(levels: int) -> dict[str, Any]:
        artifact: dict[str, Any] = {}
        for _ in range(levels - 1):
            artifact = {"k": artifact}
        return artifact

    assert message_append(thread=thread, type="tool", content="c", artifact=nested(100)).seq == 1
    with pytest.raises(MessageInvalidError, match="artifact is nested deeper than 100 levels"):
        message_append(thread=thread, type="tool", content="c", artifact=nested(101))
    assert Message.objects.count() == 1


def test_it_stores_the_text_of_an_escape_that_merely_looks_like_a_nul(thread: Thread) -> None:
    artifact = {"doc": "JSON writes NUL as \\u0000", "deep": [[[["\\u0000"]]]]}
    message = message_append(thread=thread, type="tool", content="\\u0000", artifact=artifact)
    stored = Message.objects.get(pk=message.pk)
    assert (stored.content, stored.artifact) == ("\\u0000", artifact)


def test_a_thread_title_with_an_unpaired_surrogate_is_refused(user: User) -> None:
    with pytest.raises(ThreadInvalidError, match=r"title contains an unpaired surrogate \(U\+D834\)"):
        thread_create(owner=user, title="clef \ud834")
    assert Thread.objects.count() == 0


def test_it_refuses_to_save_a_written_message_again(thread: Thread) -> None:
    message = message_append(thread=thread, type="ai", content="original")
    message.content = "edited"
    with pytest.raises(MessageImmutableError, match="immutable"):
        message.save()
    assert Message.objects.get(pk=message.pk).content == "original"


def test_it_refuses_a_queryset_update_of_messages(thread: Thread) -> None:
    message = message_append(thread=thread, type="ai", content="original")
    with pytest.raises(MessageImmutableError):
        Message.objects.filter(pk=message.pk).update(content="edited")
    with pytest.raises(MessageImmutableError):
        Message.objects.bulk_update([message], ["content"])
    assert Message.objects.get(pk=message.pk).content == "original"


def test_it_offers_no_update_service() -> None:
    from knowledgeweb.threads import services

    assert not [name for name in services.__all__ if "update" in name or "edit" in name]


def test_it_bumps_the_thread_updated_at_on_append(thread: Thread) -> None:
    before = thread.updated_at
    message_append(thread=thread, type="human", content="q")
    thread.refresh_from_db()
    assert thread.updated_at > before


def test_another_users_thread_is_not_found(thread: Thread, other_user: User) -> None:
    with pytest.raises(ThreadNotFound):
        thread_get_for_owner(owner=other_user, thread_id=thread.id)
    with pytest.raises(ThreadNotFound):
        thread_get_for_owner(owner=other_user, thread_id="not-a-uuid")
    assert list(thread_list_for_owner(owner=other_user)) == []


def test_it_lists_only_the_owners_threads_with_message_counts(user: User, other_user: User) -> None:
    mine = thread_create(owner=user, title="mine")
    message_append(thread=mine, type="human", content="q")
    thread_create(owner=other_user, title="theirs")
    listed = list(thread_list_for_owner(owner=user))
    assert [(t.title, t.message_count) for t in listed] == [("mine", 1)]


def test_appends_keep_the_threads_message_count_and_bytes(thread: Thread) -> None:
    message_append(thread=thread, type="human", content="héllo")
    message_append(thread=thread, type="ai", content="ok", artifact={"k": "é"})
    thread.refresh_from_db()
    # "héllo" is 6 UTF-8 bytes, "ok" 2, and {"k":"é"} 10.
    assert (thread.message_count, thread.content_bytes) == (2, 18)


def test_the_backfill_migration_counts_threads_written_before_the_tallies(thread: Thread) -> None:
    from importlib import import_module

    from django.apps import apps

    message_append(thread=thread, type="human", content="héllo")
    Thread.objects.filter(pk=thread.pk).update(message_count=0, content_bytes=0)
    migration = import_module("knowledgeweb.threads.migrations.0003_backfill_thread_tallies")
    migration.backfill_thread_tallies(apps, None)
    thread.refresh_from_db()
    assert (thread.message_count, thread.content_bytes) == (1, 6)
