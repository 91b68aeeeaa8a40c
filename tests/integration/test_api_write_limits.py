"""Writes are rate-limited like searches, and an import no quota admits is refused before it renders.

Issue 22, defects 3 and 7: appends and imports had no rate limit, and an import of 10,000
messages was refused as over the thread quota only after every message had been rendered.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.accounts.services import token_create
from knowledgeweb.accounts.tokens import token_digest
from knowledgeweb.mcp_server import tools
from knowledgeweb.mcp_server.identity import Caller
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import renders
from tests.integration.serving_support import base_env, run_python

pytestmark = pytest.mark.django_db

HOUR = 3600


@pytest.fixture
def render_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many messages the import path rendered (one entry per message)."""
    calls: list[int] = []
    real: Callable[..., Any] = renders.render_message

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(renders, "render_message", counting)
    return calls


def import_body(count: int, text: str = "hello") -> str:
    return json.dumps({"title": "big", "messages": [{"type": "human", "content": text}] * count})


def snapshot() -> tuple[int, int]:
    return Thread.objects.count(), Message.objects.count()


def test_an_import_of_10000_messages_is_refused_413_before_anything_is_rendered(
    api_client: Client, render_calls: list[int], settings: Any
) -> None:
    assert settings.QUOTA_THREAD_MESSAGES < 10_000
    response = api_client.post("/api/threads/import", import_body(10_000), content_type="application/json")

    assert response.status_code == 413
    body = response.json()
    assert (body["code"], body["quota"]) == ("quota_exceeded", "thread_messages")
    assert body["detail"] == (
        "Thread message quota exceeded: the import holds 10000 messages; the limit is "
        f"{settings.QUOTA_THREAD_MESSAGES} (KNOWLEDGEWEB_QUOTA_THREAD_MESSAGES). Nothing was written."
    )
    assert render_calls == []
    assert snapshot() == (0, 0)


@pytest.mark.parametrize(
    ("quota", "setting", "value"),
    [("thread_bytes", "QUOTA_THREAD_BYTES", 1_000), ("user_bytes", "QUOTA_USER_BYTES", 1_000)],
)
def test_an_import_past_a_byte_quota_is_refused_before_anything_is_rendered(
    api_client: Client, render_calls: list[int], settings: Any, quota: str, setting: str, value: int
) -> None:
    setattr(settings, setting, value)
    response = api_client.post(
        "/api/threads/import", import_body(3, "x" * 400), content_type="application/json"
    )
    assert (response.status_code, response.json()["quota"]) == (413, quota)
    assert render_calls == []
    assert snapshot() == (0, 0)


def test_an_import_past_the_user_thread_quota_is_refused_before_anything_is_rendered(
    api_client: Client, thread: Thread, render_calls: list[int], settings: Any
) -> None:
    settings.QUOTA_USER_THREADS = 1
    response = api_client.post("/api/threads/import", import_body(2), content_type="application/json")
    assert (response.status_code, response.json()["quota"]) == (413, "user_threads")
    assert render_calls == []
    assert snapshot() == (1, 0)


def test_an_import_within_the_quotas_renders_each_message_once(
    api_client: Client, render_calls: list[int]
) -> None:
    response = api_client.post("/api/threads/import", import_body(3), content_type="application/json")
    assert response.status_code == 201
    assert len(render_calls) == 3
    assert snapshot() == (1, 3)


# --- the write limit -------------------------------------------------------------------


def limit_writes(settings: Any, count: int) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "write": (count, HOUR)}


def assert_write_limited(response: Any) -> None:
    assert response.status_code == 429, response.content[:300]
    # A sliding window: the wait may reach into the next window (docs/decisions/0037-api-surface-limits-text-and-openapi.md).
    assert 1 <= int(response["Retry-After"]) <= 2 * HOUR
    body = response.json()
    assert body["code"] == "rate_limited"
    assert body["detail"].startswith("Too many writes with this token: try again in ")


def test_appends_imports_and_new_threads_share_one_write_limit_per_token(
    settings: Any, user: User, api_client: Client, thread: Thread
) -> None:
    limit_writes(settings, 3)
    append = {"type": "human", "content": "hi"}
    url = f"/api/threads/{thread.id}/messages"
    assert api_client.post(url, append, content_type="application/json").status_code == 201
    assert api_client.post("/api/threads", {"title": "t"}, content_type="application/json").status_code == 201
    assert (
        api_client.post("/api/threads/import", import_body(1), content_type="application/json").status_code
        == 201
    )
    before = snapshot()

    assert_write_limited(api_client.post(url, append, content_type="application/json"))
    assert_write_limited(api_client.post("/api/threads", {"title": "t"}, content_type="application/json"))
    # Refused before the body is read: this one is not even JSON.
    assert_write_limited(api_client.post("/api/threads/import", "{", content_type="application/json"))
    assert snapshot() == before

    # Reads are not writes; another token of the same user has its own budget.
    assert api_client.get(f"/api/threads/{thread.id}").status_code == 200
    _, second = token_create(user=user, name="second")
    other = Client(HTTP_AUTHORIZATION=f"Bearer {second}")
    assert other.post(url, append, content_type="application/json").status_code == 201


def test_a_session_user_is_limited_as_one_caller(settings: Any, user: User, thread: Thread) -> None:
    limit_writes(settings, 1)
    client = Client(enforce_csrf_checks=False)
    client.force_login(user)
    url = f"/api/threads/{thread.id}/messages"
    assert (
        client.post(url, {"type": "human", "content": "a"}, content_type="application/json").status_code
        == 201
    )
    assert_write_limited(client.post(url, {"type": "human", "content": "b"}, content_type="application/json"))
    assert Message.objects.count() == 1


def test_the_mcp_write_tools_count_against_the_tokens_write_limit(
    settings: Any, user: User, api_token: str, api_client: Client, thread: Thread
) -> None:
    limit_writes(settings, 2)
    caller = Caller(user=user, token_key=token_digest(api_token), agent_name="")
    created = tools.tool_call(caller=lambda: caller, name="create_thread", arguments={"title": "t"})
    assert created.status == 201
    # The API and MCP share the token's budget, as they share its search budget.
    url = f"/api/threads/{thread.id}/messages"
    assert (
        api_client.post(url, {"type": "human", "content": "a"}, content_type="application/json").status_code
        == 201
    )
    before = snapshot()

    refused = tools.tool_call(
        caller=lambda: caller, name="append_answer", arguments={"thread_id": str(thread.id), "content": "x"}
    )

    assert (refused.status, refused.structured["code"]) == (429, "rate_limited")
    assert refused.structured["detail"].startswith("Too many writes with this token")
    assert snapshot() == before
    # Reading tools are not writes.
    report = tools.tool_call(
        caller=lambda: caller, name="citation_report", arguments={"thread_id": str(thread.id)}
    )
    assert report.status == 200


def test_the_write_limit_comes_from_the_environment() -> None:
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.RATE_LIMITS['write'])"
    )
    env = base_env(DEBUG="1", DJANGO_SETTINGS_MODULE="knowledgeweb.settings", RATE_LIMIT_WRITE="7/hour")
    result = run_python(code, env)
    assert result.stdout.strip().splitlines()[-1] == "(7, 3600)", result.stderr
