"""Quotas on every write path: 413 (or the path's own refusal) with the reason, and nothing written.

Limits here are small (set through Django settings, as the environment would):
3 messages and 1,000 bytes per thread, 2 threads and 1,500 bytes per user.
"""

from __future__ import annotations

import importlib
import io
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client

from knowledgeweb.accounts.services import token_create
from knowledgeweb.answers.errors import AnswerError
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.composer.services import turn_ask
from knowledgeweb.threads.errors import QuotaExceededError
from knowledgeweb.threads.interchange.imports import thread_import
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.quotas import message_size
from knowledgeweb.threads.services import message_append, thread_create
from tests.synthetic import (
    LIGHTRAG_URL,
    Upstream,
    lightrag_routes,
    serving,
    synthetic_lightrag_chunk,
    synthetic_lightrag_success,
)

pytestmark = pytest.mark.django_db

THREAD_MESSAGES = "Thread message quota exceeded"
THREAD_BYTES = "Thread size quota exceeded"
USER_THREADS = "Thread count quota exceeded"
USER_BYTES = "Storage quota exceeded"
NOTHING = "Nothing was written."


@pytest.fixture(autouse=True)
def small_quotas(settings: Any) -> None:
    settings.QUOTA_THREAD_MESSAGES = 3
    settings.QUOTA_THREAD_BYTES = 1000
    settings.QUOTA_USER_THREADS = 2
    settings.QUOTA_USER_BYTES = 1500


def snapshot() -> tuple[Any, ...]:
    """Everything a refused write could have touched."""
    threads = list(
        Thread.objects.order_by("id").values_list("id", "message_count", "content_bytes", "updated_at")
    )
    messages = list(Message.objects.order_by("id").values_list("id", "thread_id", "seq"))
    return threads, messages


def assert_tallies_true() -> None:
    """Each thread's tallies equal what its messages hold."""
    for thread in Thread.objects.all():
        messages = Message.objects.filter(thread=thread)
        size = sum(
            message_size(content=m.content, artifact=m.artifact, tool_calls=m.tool_calls, parts=m.parts)
            for m in messages
        )
        assert (thread.message_count, thread.content_bytes) == (messages.count(), size), thread.title


def refused_413(response: Any, reason: str, quota: str) -> None:
    assert response.status_code == 413, response.content
    body = response.json()
    assert body["detail"].startswith(reason)
    assert body["detail"].endswith(NOTHING)
    assert (body["code"], body["quota"]) == ("quota_exceeded", quota)


@pytest.fixture
def client_for() -> Any:
    def make(user: User) -> Client:
        _, raw = token_create(user=user, name="t")
        return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")

    return make


def append(client: Client, thread: Thread, content: str, **extra: Any) -> Any:
    return client.post(
        f"/api/threads/{thread.id}/messages",
        {"type": "human", "content": content, **extra},
        content_type="application/json",
    )


# --- the API's append ---------------------------------------------------------------------------


def test_append_past_the_thread_message_quota(user: User, thread: Thread, client_for: Any) -> None:
    client = client_for(user)
    for n in range(3):
        assert append(client, thread, f"m{n}").status_code == 201
    before = snapshot()
    response = append(client, thread, "one too many")
    refused_413(response, THREAD_MESSAGES, "thread_messages")
    assert "the thread holds 3 messages and would hold 4; the limit is 3" in response.json()["detail"]
    assert "KNOWLEDGEWEB_QUOTA_THREAD_MESSAGES" in response.json()["detail"]
    assert snapshot() == before
    assert_tallies_true()


def test_append_past_the_thread_byte_quota_counts_utf8_bytes_and_artifacts(
    user: User, thread: Thread, client_for: Any
) -> None:
    client = client_for(user)
    assert append(client, thread, "é" * 400).status_code == 201  # 800 bytes, 400 characters
    before = snapshot()
    # 150 characters and a small artifact: under 1,000 characters in all, over 1,000 bytes.
    response = append(client, thread, "x" * 150, artifact={"note": "y" * 49})  # {"note":"…"}: 60 bytes
    refused_413(response, THREAD_BYTES, "thread_bytes")
    assert (
        "the thread holds 800 bytes and would hold 1010; the limit is 1000 bytes" in response.json()["detail"]
    )
    assert snapshot() == before
    assert append(client, thread, "x" * 150, artifact={"note": "y" * 39}).status_code == 201
    assert Thread.objects.get().content_bytes == 1000
    assert_tallies_true()


def test_append_past_the_user_byte_quota(user: User, client_for: Any) -> None:
    client = client_for(user)
    first, second = thread_create(owner=user, title="a"), thread_create(owner=user, title="b")
    assert append(client, first, "a" * 900).status_code == 201
    assert append(client, second, "b" * 500).status_code == 201
    before = snapshot()
    response = append(client, second, "c" * 200)
    refused_413(response, USER_BYTES, "user_bytes")
    assert (
        "your threads hold 1400 bytes and would hold 1600; the limit is 1500 bytes"
        in response.json()["detail"]
    )
    assert snapshot() == before


def test_another_users_usage_does_not_count(user: User, other_user: User, client_for: Any) -> None:
    theirs = thread_create(owner=other_user, title="theirs")
    message_append(thread=theirs, type="human", content="z" * 900)
    mine = thread_create(owner=user, title="mine")
    assert append(client_for(user), mine, "a" * 900).status_code == 201


# --- thread creation ---------------------------------------------------------------------------


def test_creating_a_thread_past_the_user_thread_quota(user: User, other_user: User, client_for: Any) -> None:
    client = client_for(user)
    for title in ("one", "two"):
        assert (
            client.post("/api/threads", {"title": title}, content_type="application/json").status_code == 201
        )
    before = snapshot()
    response = client.post("/api/threads", {"title": "three"}, content_type="application/json")
    refused_413(response, USER_THREADS, "user_threads")
    assert "you already own 2 threads; the limit is 2" in response.json()["detail"]
    assert snapshot() == before
    # The quota is per user.
    thread_create(owner=other_user, title="theirs")


# --- the API's import --------------------------------------------------------------------------


def import_body(*contents: str, **extra: Any) -> dict[str, Any]:
    return {"title": "Imported", "messages": [{"type": "human", "content": c} for c in contents], **extra}


@pytest.mark.parametrize(
    ("contents", "reason", "quota"),
    [
        (["a", "b", "c", "d"], THREAD_MESSAGES, "thread_messages"),
        (["a" * 600, "b" * 401], THREAD_BYTES, "thread_bytes"),
    ],
)
def test_api_import_past_a_thread_quota(
    user: User, client_for: Any, contents: list[str], reason: str, quota: str
) -> None:
    response = client_for(user).post(
        "/api/threads/import", import_body(*contents), content_type="application/json"
    )
    refused_413(response, reason, quota)
    assert snapshot() == ([], [])


def test_api_import_past_the_user_quotas(user: User, client_for: Any) -> None:
    client = client_for(user)
    assert (
        client.post(
            "/api/threads/import", import_body("a" * 900), content_type="application/json"
        ).status_code
        == 201
    )
    before = snapshot()
    response = client.post("/api/threads/import", import_body("b" * 700), content_type="application/json")
    refused_413(response, USER_BYTES, "user_bytes")
    assert snapshot() == before
    assert (
        client.post(
            "/api/threads/import", import_body("b" * 500), content_type="application/json"
        ).status_code
        == 201
    )
    before = snapshot()
    response = client.post("/api/threads/import", import_body("c"), content_type="application/json")
    refused_413(response, USER_THREADS, "user_threads")
    assert snapshot() == before
    assert_tallies_true()


# --- import_thread -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("contents", "reason"),
    [(["a", "b", "c", "d"], THREAD_MESSAGES), (["é" * 501], THREAD_BYTES)],
)
def test_the_import_command_past_a_quota(
    user: User, tmp_path: Path, contents: list[str], reason: str
) -> None:
    path = tmp_path / "thread.json"
    path.write_text(json.dumps(import_body(*contents)), encoding="utf-8")
    with pytest.raises(CommandError) as caught:
        call_command("import_thread", str(path), owner=user.username, stdout=io.StringIO())
    assert str(caught.value).startswith(f"Nothing imported: {reason}")
    assert snapshot() == ([], [])


def test_the_import_command_past_the_user_thread_quota(user: User, tmp_path: Path) -> None:
    thread_create(owner=user, title="one")
    thread_create(owner=user, title="two")
    before = snapshot()
    path = tmp_path / "thread.json"
    path.write_text(json.dumps(import_body("hello")), encoding="utf-8")
    with pytest.raises(CommandError, match=f"Nothing imported: {USER_THREADS}"):
        call_command("import_thread", str(path), owner=user.username, stdout=io.StringIO())
    assert snapshot() == before


# --- retrieval's tool message ------------------------------------------------------------------


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch, user: User) -> Iterator[Upstream]:
    answer = synthetic_lightrag_success(
        chunks=[synthetic_lightrag_chunk("c-1", "Acme was founded by Ada Lovelace in 1843. " * 6)]
    )
    with serving(monkeypatch, lightrag=lightrag_routes(answer)) as server:
        binding_create(
            name="lightrag-main",
            provider="lightrag",
            base_url=LIGHTRAG_URL,
            api_key_env="KNOWLEDGEWEB_KEY_LIGHTRAG",
            tools=["knowledge_search"],
            users=[user],
        )
        yield server


def search(client: Client, thread: Thread) -> Any:
    return client.post(
        "/api/knowledge/search",
        {"tool": "knowledge_search", "query": "who founded acme?", "thread_id": str(thread.id)},
        content_type="application/json",
    )


def test_a_search_into_a_full_thread_is_refused_before_any_request(
    upstream: Upstream, user: User, thread: Thread, client_for: Any
) -> None:
    for n in range(3):
        message_append(thread=thread, type="human", content=f"m{n}")
    before = snapshot()
    refused_413(search(client_for(user), thread), THREAD_MESSAGES, "thread_messages")
    assert upstream.requests == []
    assert snapshot() == before


def test_a_tool_message_past_the_byte_quota_is_not_written(
    upstream: Upstream, user: User, thread: Thread, client_for: Any, settings: Any
) -> None:
    settings.QUOTA_THREAD_BYTES = 600  # the synthetic answer's tool message is larger
    message_append(thread=thread, type="human", content="q" * 100)
    before = snapshot()
    refused_413(search(client_for(user), thread), THREAD_BYTES, "thread_bytes")
    assert len(upstream.requests) == 1  # the search ran; its result did not fit
    assert snapshot() == before


def test_a_failed_search_past_the_quota_writes_no_error_message(
    monkeypatch: pytest.MonkeyPatch, user: User, thread: Thread, client_for: Any, settings: Any
) -> None:
    import httpx

    with serving(monkeypatch, lightrag=lambda request: httpx.Response(500, json={"detail": "boom " * 50})):
        binding_create(
            name="lightrag-main",
            provider="lightrag",
            base_url=LIGHTRAG_URL,
            api_key_env="KNOWLEDGEWEB_KEY_LIGHTRAG",
            tools=["knowledge_search"],
            users=[user],
        )
        settings.QUOTA_THREAD_BYTES = 120
        message_append(thread=thread, type="human", content="q" * 100)
        before = snapshot()
        refused_413(search(client_for(user), thread), THREAD_BYTES, "thread_bytes")
        assert snapshot() == before


# --- Ask ---------------------------------------------------------------------------------------


def ask(user: User) -> Thread:
    result = turn_ask(user=user, question="who founded acme?", binding_name="lightrag-main", rate_key=None)
    return Thread.objects.get(pk=result.thread_id)


def test_ask_past_the_user_thread_quota_asks_no_provider_and_writes_nothing(
    upstream: Upstream, user: User
) -> None:
    thread_create(owner=user, title="one")
    thread_create(owner=user, title="two")
    before = snapshot()
    with pytest.raises(AnswerError) as caught:
        ask(user)
    assert caught.value.kind == "quota"
    assert str(caught.value).startswith(USER_THREADS)
    assert upstream.requests == []
    assert snapshot() == before


def test_ask_whose_answer_passes_a_quota_writes_nothing(
    upstream: Upstream, user: User, settings: Any
) -> None:
    settings.QUOTA_THREAD_BYTES = 300
    with pytest.raises(AnswerError) as caught:
        ask(user)
    assert caught.value.kind == "quota"
    assert str(caught.value).startswith(THREAD_BYTES)
    assert snapshot() == ([], [])


def test_the_ask_page_answers_413_with_the_reason(upstream: Upstream, user: User) -> None:
    thread_create(owner=user, title="one")
    thread_create(owner=user, title="two")
    client = Client()
    client.force_login(user)
    before = snapshot()
    response = client.post("/ask/", {"question": "who founded acme?", "binding": "lightrag-main"})
    assert response.status_code == 413
    assert USER_THREADS in response.content.decode()
    assert snapshot() == before
    assert upstream.requests == []


def test_ask_keeps_the_tallies(upstream: Upstream, user: User, settings: Any) -> None:
    settings.QUOTA_THREAD_MESSAGES = 100
    settings.QUOTA_THREAD_BYTES = settings.QUOTA_USER_BYTES = 10_000_000
    thread = ask(user)
    assert Thread.objects.get(pk=thread.pk).message_count == 3
    assert_tallies_true()


# --- the tallies and their backfill ------------------------------------------------------------


def test_every_write_keeps_the_tallies(user: User, settings: Any) -> None:
    settings.QUOTA_THREAD_MESSAGES = 100
    settings.QUOTA_THREAD_BYTES = settings.QUOTA_USER_BYTES = 10_000_000
    thread = thread_create(owner=user, title="t")
    message_append(thread=thread, type="human", content="héllo")
    message_append(thread=thread, type="tool", content="out", artifact={"k": ["ü", 1.5, None]}, name="x")
    thread_import(
        owner=user,
        title="i",
        messages=[{"type": "ai", "content": "answer"}, {"type": "human", "content": ""}],
    )
    assert_tallies_true()
    assert Thread.objects.get(pk=thread.pk).content_bytes == len("héllo".encode()) + 3 + len(
        '{"k":["ü",1.5,null]}'.encode()
    )


def test_the_backfill_migration_fills_the_tallies_of_existing_threads(user: User, settings: Any) -> None:
    settings.QUOTA_THREAD_MESSAGES = 100
    settings.QUOTA_THREAD_BYTES = settings.QUOTA_USER_BYTES = 10_000_000
    full = thread_create(owner=user, title="full")
    message_append(thread=full, type="human", content="héllo")
    message_append(thread=full, type="tool", content="out", artifact={"b": 1, "a": "ß"}, name="x")
    empty = thread_create(owner=user, title="empty")
    expected = {t.pk: (t.message_count, t.content_bytes) for t in Thread.objects.all()}
    stamps = dict(Thread.objects.values_list("pk", "updated_at"))
    # As rows written before the tallies existed would be.
    Thread.objects.update(message_count=0, content_bytes=0)
    Thread.objects.filter(pk=empty.pk).update(message_count=7, content_bytes=99)
    migration = importlib.import_module("knowledgeweb.threads.migrations.0003_backfill_thread_tallies")
    migration.backfill_thread_tallies(apps, None)
    assert {t.pk: (t.message_count, t.content_bytes) for t in Thread.objects.all()} == expected
    assert expected[empty.pk] == (0, 0)
    assert dict(Thread.objects.values_list("pk", "updated_at")) == stamps
    assert_tallies_true()


def test_the_quota_settings_come_from_the_environment() -> None:
    from knowledgeweb.environment import env_int

    environ = {"KNOWLEDGEWEB_QUOTA_THREAD_MESSAGES": "250"}
    assert env_int("KNOWLEDGEWEB_QUOTA_THREAD_MESSAGES", 5000, environ=environ) == 250
    assert env_int("KNOWLEDGEWEB_QUOTA_USER_THREADS", 5000, environ=environ) == 5000


# --- concurrency: the quota holds when writers race --------------------------------------------


def race(workers: int, work: Any) -> tuple[int, list[BaseException]]:
    """Run ``work`` in ``workers`` threads at once; count the successes, keep the refusals."""
    start = threading.Barrier(workers)
    done: list[int] = []
    failures: list[BaseException] = []

    def worker() -> None:
        try:
            start.wait()
            work()
            done.append(1)
        except BaseException as exc:  # reported below, with the assertion
            failures.append(exc)
        finally:
            connection.close()

    pool = [threading.Thread(target=worker) for _ in range(workers)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return len(done), failures


@pytest.mark.django_db(transaction=True)
def test_racing_appends_stop_exactly_at_the_thread_message_quota(user: User, settings: Any) -> None:
    settings.QUOTA_THREAD_MESSAGES = 5
    thread = thread_create(owner=user, title="race")
    succeeded, failures = race(12, lambda: message_append(thread=thread, type="human", content="m"))
    assert succeeded == 5
    assert len(failures) == 7
    assert all(isinstance(f, QuotaExceededError) and f.quota == "thread_messages" for f in failures), failures
    assert list(Message.objects.filter(thread=thread).values_list("seq", flat=True).order_by("seq")) == [
        1,
        2,
        3,
        4,
        5,
    ]
    assert_tallies_true()


@pytest.mark.django_db(transaction=True)
def test_racing_appends_to_two_threads_stop_at_the_user_byte_quota(user: User, settings: Any) -> None:
    settings.QUOTA_THREAD_MESSAGES = 100
    settings.QUOTA_USER_BYTES = 1000
    threads = [thread_create(owner=user, title="a"), thread_create(owner=user, title="b")]
    turn = iter(range(100))

    def work() -> None:
        message_append(thread=threads[next(turn) % 2], type="human", content="x" * 100)

    succeeded, failures = race(14, work)
    assert succeeded == 10
    assert all(isinstance(f, QuotaExceededError) and f.quota == "user_bytes" for f in failures), failures
    assert sum(Thread.objects.values_list("content_bytes", flat=True)) == 1000
    assert_tallies_true()


@pytest.mark.django_db(transaction=True)
def test_racing_thread_creation_stops_at_the_user_thread_quota(user: User, settings: Any) -> None:
    settings.QUOTA_USER_THREADS = 3
    succeeded, failures = race(8, lambda: thread_create(owner=user, title="t"))
    assert succeeded == 3
    assert all(isinstance(f, QuotaExceededError) and f.quota == "user_threads" for f in failures), failures
    assert Thread.objects.filter(owner=user).count() == 3


# --- the remaining quota on each path ----------------------------------------------------------


def test_the_import_command_past_the_user_byte_quota(user: User, tmp_path: Path) -> None:
    message_append(thread=thread_create(owner=user, title="one"), type="human", content="a" * 900)
    before = snapshot()
    path = tmp_path / "thread.json"
    path.write_text(json.dumps(import_body("b" * 700)), encoding="utf-8")
    with pytest.raises(CommandError, match=f"Nothing imported: {USER_BYTES}"):
        call_command("import_thread", str(path), owner=user.username, stdout=io.StringIO())
    assert snapshot() == before


def test_ask_past_the_thread_message_quota_writes_nothing(
    upstream: Upstream, user: User, settings: Any
) -> None:
    settings.QUOTA_THREAD_MESSAGES = 2  # question, tool message and answer make 3
    settings.QUOTA_THREAD_BYTES = settings.QUOTA_USER_BYTES = 10_000_000
    with pytest.raises(AnswerError) as caught:
        ask(user)
    assert caught.value.kind == "quota"
    assert str(caught.value).startswith(THREAD_MESSAGES)
    assert snapshot() == ([], [])


def test_ask_past_the_user_byte_quota_asks_no_provider_and_writes_nothing(
    upstream: Upstream, user: User, settings: Any
) -> None:
    settings.QUOTA_USER_THREADS = 10
    message_append(thread=thread_create(owner=user, title="a"), type="human", content="a" * 900)
    message_append(thread=thread_create(owner=user, title="b"), type="human", content="b" * 600)
    before = snapshot()  # 1,500 of 1,500 bytes: full
    with pytest.raises(AnswerError) as caught:
        ask(user)
    assert caught.value.kind == "quota"
    assert str(caught.value).startswith(USER_BYTES)
    assert upstream.requests == []
    assert snapshot() == before


def test_a_search_past_the_user_byte_quota_is_refused(
    upstream: Upstream, user: User, client_for: Any, settings: Any
) -> None:
    settings.QUOTA_THREAD_BYTES = 10_000
    full = thread_create(owner=user, title="full")
    message_append(thread=full, type="human", content="a" * 1000)
    before = snapshot()
    # Before the search: the user's threads already hold 1,000 of 1,500 bytes, and the tool
    # message does not fit in what is left, so the search runs and nothing is written.
    refused_413(search(client_for(user), full), USER_BYTES, "user_bytes")
    assert len(upstream.requests) == 1
    assert snapshot() == before
    settings.QUOTA_USER_BYTES = 1000  # now already full: refused before any request
    refused_413(search(client_for(user), full), USER_BYTES, "user_bytes")
    assert len(upstream.requests) == 1
    assert snapshot() == before


def test_thinking_parts_and_tool_calls_count_against_the_byte_quota_and_a_refused_import_writes_nothing(
    user: User,
) -> None:
    # Imported parts and calls are stored with the message, so they weigh what they hold.
    thinking = {"role": "assistant", "content": [{"type": "thinking", "thinking": "t" * 1200}, "Done."]}
    before = snapshot()
    with pytest.raises(QuotaExceededError, match="the limit is 1000 bytes"):
        thread_import(owner=user, title="Big thoughts", messages=[thinking])
    assert snapshot() == before
    call = {"id": "c1", "name": "search", "args": {"query": "q" * 1200}}
    with pytest.raises(QuotaExceededError, match="the limit is 1000 bytes"):
        thread_import(
            owner=user, title="Big call", messages=[{"type": "ai", "content": "", "tool_calls": [call]}]
        )
    assert snapshot() == before
    small = thread_import(
        owner=user,
        title="Small",
        messages=[thinking | {"content": [{"type": "thinking", "thinking": "t"}, "ok"]}],
    )
    stored = Message.objects.get(thread=small)
    assert small.content_bytes == message_size(
        content=stored.content, artifact=stored.artifact, tool_calls=stored.tool_calls, parts=stored.parts
    )
    assert small.content_bytes > len(stored.content.encode())
