"""Rate limits: searches per token, failed token checks and sign-ins per client address.

429 with ``Retry-After``, limits from settings (the environment), fail open when the
cache is away. Each test gets a fresh limiter namespace (tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.accounts.services import token_create
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.threads.models import Message
from tests.integration.serving_support import ROOT, HungListener, base_env, run_manage
from tests.synthetic import LIGHTRAG_URL, serving

pytestmark = pytest.mark.django_db

HOUR = 3600  # a long window: no test straddles two windows


def limit(settings: Any, scope: str, count: int) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, scope: (count, HOUR)}


def assert_limited(response: Any) -> dict[str, Any]:
    assert response.status_code == 429, response.content[:300]
    # A sliding window: the wait may reach into the next window (docs/decisions/0037-api-surface-limits-text-and-openapi.md).
    assert 1 <= int(response["Retry-After"]) <= 2 * HOUR
    body = response.json()
    assert body["code"] == "rate_limited"
    return dict(body)


def test_failed_token_checks_are_limited_per_address_and_a_valid_token_is_always_accepted(
    settings: Any, api_token: str
) -> None:
    limit(settings, "token_failure", 3)
    wrong = Client(HTTP_AUTHORIZATION="Bearer kwt_wrong")
    assert [wrong.get("/api/threads").status_code for _ in range(3)] == [401, 401, 401]
    body = assert_limited(wrong.get("/api/threads"))
    assert body["detail"].startswith("Too many failed token checks from your address: try again in ")
    # A valid token from the same address is never refused for others' failures: behind a
    # proxy with no trusted hops every client shares one address (issue 22, defect 8).
    right = Client(HTTP_AUTHORIZATION=f"Bearer {api_token}")
    assert [right.get("/api/threads").status_code for _ in range(3)] == [200, 200, 200]
    # ...and wrong tokens from that address are still refused.
    assert_limited(wrong.get("/api/threads"))


def test_a_flood_of_wrong_tokens_that_share_a_valid_tokens_prefix_locks_nobody_out(
    settings: Any, api_token: str
) -> None:
    # The public prefix of a token is not a key of any limit: forging it costs its owner nothing.
    limit(settings, "token_failure", 2)
    forged = api_token[:12] + "x" * (len(api_token) - 12)
    statuses = [
        Client(HTTP_AUTHORIZATION=f"Bearer {forged}", REMOTE_ADDR=f"10.0.0.{n}")
        .get("/api/threads")
        .status_code
        for n in range(1, 6)
    ]
    assert statuses == [401] * 5
    assert Client(HTTP_AUTHORIZATION=f"Bearer {api_token}").get("/api/threads").status_code == 200


def test_successful_token_checks_are_not_counted(settings: Any, api_client: Client) -> None:
    limit(settings, "token_failure", 2)
    assert {api_client.get("/api/threads").status_code for _ in range(6)} == {200}


def test_a_forged_forwarded_for_header_does_not_escape_the_limit(settings: Any) -> None:
    limit(settings, "token_failure", 2)
    statuses = [
        Client(HTTP_AUTHORIZATION="Bearer kwt_wrong", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}")
        .get("/api/threads")
        .status_code
        for n in range(4)
    ]
    assert statuses == [401, 401, 429, 429]


def test_with_a_trusted_proxy_the_forwarded_client_address_is_counted(settings: Any) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    limit(settings, "token_failure", 2)

    def attempt(client_address: str) -> int:
        # The client may forge the left part; our proxy appends the address it saw.
        header = f"203.0.113.99, {client_address}"
        return (
            Client(HTTP_AUTHORIZATION="Bearer kwt_wrong", HTTP_X_FORWARDED_FOR=header)
            .get("/api/threads")
            .status_code
        )

    assert [attempt("192.0.2.1") for _ in range(3)] == [401, 401, 429]
    assert attempt("192.0.2.2") == 401


@pytest.fixture
def lightrag_binding(user: User, other_user: User) -> None:
    binding_create(
        name="lightrag-main", provider="lightrag", base_url=LIGHTRAG_URL, api_key_env="KNOWLEDGEWEB_KEY_LIGHTRAG",
        tools=["knowledge_search"], users=[user, other_user],
    )  # fmt: skip


def test_searches_are_limited_per_token_and_a_refused_search_sends_nothing(
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    lightrag_binding: None,
    user: User,
    other_user: User,
    thread: Any,
) -> None:
    limit(settings, "search", 2)
    _, first = token_create(user=user, name="first")
    _, second = token_create(user=user, name="second")
    _, others = token_create(user=other_user, name="other")
    payload = {"tool": "knowledge_search", "query": "who founded acme?", "thread_id": str(thread.id)}

    def search(token: str) -> Any:
        client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
        return client.post("/api/knowledge/search", payload, content_type="application/json")

    with serving(monkeypatch) as upstream:
        assert [search(first).status_code for _ in range(2)] == [200, 200]
        sent, written = len(upstream.requests), Message.objects.count()
        body = assert_limited(search(first))
        assert body["detail"].startswith("Too many searches with this token: try again in ")
        assert (len(upstream.requests), Message.objects.count()) == (sent, written)
        # Limits are per token: the user's second token and another user's still search.
        assert search(second).status_code == 200
        other_thread = {"tool": "knowledge_search", "query": "q"}
        response = Client(HTTP_AUTHORIZATION=f"Bearer {others}").post(
            "/api/knowledge/search", other_thread, content_type="application/json"
        )
        assert response.status_code == 200


def test_the_openapi_schema_documents_429_with_retry_after(client: Client) -> None:
    schema = client.get("/api/openapi.json").json()
    for path, method in [("/api/knowledge/search", "post"), ("/api/threads", "get")]:
        answer = schema["paths"][path][method]["responses"]["429"]
        assert "Retry-After" in answer["headers"]
        assert answer["content"]["application/json"]["schema"]["required"] == ["detail", "code"]


@pytest.mark.parametrize("login_path", ["/accounts/login/", "/admin/login/"])
def test_failed_sign_ins_are_limited_per_address(settings: Any, user: User, login_path: str) -> None:
    limit(settings, "login_failure", 3)
    user.is_staff = True
    user.save()
    client = Client()
    wrong = {"username": "alice", "password": "not-it"}
    assert [client.post(login_path, wrong).status_code for _ in range(3)] == [200, 200, 200]
    refused = client.post(login_path, {"username": "alice", "password": "alice-password-1"})
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1
    assert "Too many failed sign-ins from your address" in refused.content.decode()
    assert "_auth_user_id" not in client.session
    # Another address signs in normally.
    other = Client(REMOTE_ADDR="10.9.8.7")
    assert other.post(login_path, {"username": "alice", "password": "alice-password-1"}).status_code == 302


def test_successful_sign_ins_are_not_counted(settings: Any, user: User) -> None:
    limit(settings, "login_failure", 1)
    for _ in range(3):
        client = Client()
        assert (
            client.post("/accounts/login/", {"username": "alice", "password": "alice-password-1"}).status_code
            == 302
        )


def test_limits_fail_open_and_log_when_the_cache_is_unreachable(
    settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with HungListener() as hung:
        settings.CACHES = {
            "default": {
                "BACKEND": "knowledgeweb.ops.cache.ResilientRedisCache",
                "LOCATION": f"redis://127.0.0.1:{hung.port}/0",
                "OPTIONS": {"socket_timeout": 0.2, "socket_connect_timeout": 0.2},
            }
        }
        limit(settings, "token_failure", 1)
        wrong = Client(HTTP_AUTHORIZATION="Bearer kwt_wrong")
        assert [wrong.get("/api/threads").status_code for _ in range(4)] == [401] * 4
        # One timeout, then the process leaves the cache alone for a while.
        assert hung.accepted == 1
    assert "Cache unreachable (TimeoutError)" in caplog.text
    assert "Rate limit 'token_failure' not" in caplog.text


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("30 a minute", "RATE_LIMIT_SEARCH must be a rate such as 30/minute"),
        ("0/minute", "RATE_LIMIT_SEARCH must be a rate such as 30/minute"),
        ("5/0second", "RATE_LIMIT_SEARCH must be a rate such as 30/minute"),
    ],
)
def test_a_malformed_limit_stops_start_up_with_its_name(value: str, message: str) -> None:
    result = run_manage("check", env=base_env(DEBUG="1", RATE_LIMIT_SEARCH=value))
    assert result.returncode != 0
    assert message in result.stderr


# Two processes on Redis: the limit is one count, not one per process.

CLIENT = """
import json, os, sys, time
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "knowledgeweb.settings")
import django
django.setup()
from django.conf import settings
from django.test import Client
settings.RATE_LIMIT_NAMESPACE = sys.argv[1]
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.01)
client = Client(HTTP_AUTHORIZATION="Bearer kwt_wrong")
print(json.dumps([client.get("/api/threads").status_code for _ in range(8)]))
"""


def redis_url() -> str:
    url = os.environ.get("CACHE_URL", "")
    if urlsplit(url).scheme not in {"redis", "rediss"}:
        pytest.skip("runs on the scale path: set CACHE_URL=redis://... (make test does when Redis answers)")
    return url


def test_two_processes_share_one_count_through_redis(tmp_path: Any, settings: Any) -> None:
    env = base_env(
        DEBUG="1",
        DATABASE_URL=f"sqlite:///{tmp_path / 'shared.sqlite3'}",
        CACHE_URL=redis_url(),
        RATE_LIMIT_TOKEN_FAILURES="10/hour",
        ALLOWED_HOSTS="testserver",
        LOG_LEVEL="WARNING",
    )
    migrated = run_manage("migrate", "--noinput", env=env)
    assert migrated.returncode == 0, migrated.stderr
    go = tmp_path / "go"
    children = [
        subprocess.Popen(  # noqa: S603 - our own interpreter and code
            [
                sys.executable,
                "-c",
                CLIENT,
                settings.RATE_LIMIT_NAMESPACE,
                str(tmp_path / f"ready-{n}"),
                str(go),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    try:
        while not all((tmp_path / f"ready-{n}").exists() for n in range(2)):
            assert all(child.poll() is None for child in children), children[0].stderr
            time.sleep(0.01)
        go.touch()
        outputs = [child.communicate(timeout=120) for child in children]
    finally:
        for child in children:
            child.kill()
    statuses = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    together = statuses[0] + statuses[1]
    # 16 attempts against one limit of 10: ten answered, six refused, whichever process sent them.
    assert (together.count(401), together.count(429)) == (10, 6), (statuses, [err for _, err in outputs])
    assert all(429 in s or s == [401] * 8 for s in statuses)
