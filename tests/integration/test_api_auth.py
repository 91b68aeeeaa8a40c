"""API authentication and ownership: bearer tokens (hashed), sessions with CSRF, 401/403/404."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.accounts.models import ApiToken
from knowledgeweb.accounts.services import token_create
from knowledgeweb.accounts.tokens import token_digest
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import thread_create

pytestmark = pytest.mark.django_db

NEW_THREAD = {"title": "New"}


def test_a_request_without_credentials_answers_401_and_writes_nothing(client: Client, user: User) -> None:
    response = client.post("/api/threads", NEW_THREAD, content_type="application/json")
    assert response.status_code == 401
    assert response.json() == {
        "detail": "Authentication required: send 'Authorization: Bearer <token>' or use a logged-in session.",
        "code": "unauthenticated",
    }
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert Thread.objects.count() == 0


@pytest.mark.parametrize(
    "header", ["Bearer not-a-token", "Bearer ", "bearer kwt_" + "x" * 43, "Bearer " + "y" * 300]
)
def test_an_invalid_token_answers_401_and_writes_nothing(client: Client, user: User, header: str) -> None:
    response = client.post(
        "/api/threads", NEW_THREAD, content_type="application/json", HTTP_AUTHORIZATION=header
    )
    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid or revoked API token.", "code": "unauthenticated"}
    assert Thread.objects.count() == 0


def test_a_wrong_token_does_not_fall_back_to_the_session(client: Client, user: User) -> None:
    client.force_login(user)
    response = client.get("/api/threads", HTTP_AUTHORIZATION="Bearer kwt_wrong")
    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid or revoked API token.", "code": "unauthenticated"}


def test_a_valid_token_authenticates_its_user(api_client: Client, user: User) -> None:
    response = api_client.post("/api/threads", NEW_THREAD, content_type="application/json")
    assert response.status_code == 201
    assert Thread.objects.get().owner == user


def test_a_revoked_token_or_an_inactive_user_answers_401(client: Client, user: User) -> None:
    revoked, raw_revoked = token_create(user=user)
    ApiToken.objects.filter(pk=revoked.pk).update(is_active=False)
    _, raw_active = token_create(user=user)
    assert client.get("/api/threads", HTTP_AUTHORIZATION=f"Bearer {raw_revoked}").status_code == 401
    assert client.get("/api/threads", HTTP_AUTHORIZATION=f"Bearer {raw_active}").status_code == 200
    User.objects.filter(pk=user.pk).update(is_active=False)
    assert client.get("/api/threads", HTTP_AUTHORIZATION=f"Bearer {raw_active}").status_code == 401


def test_only_a_hash_of_the_token_is_stored(user: User) -> None:
    token, raw = token_create(user=user, name="laptop")
    stored = ApiToken.objects.get(pk=token.pk)
    assert stored.digest == token_digest(raw)
    assert raw not in {stored.digest, stored.prefix, stored.name}
    assert raw.startswith(stored.prefix)
    assert len(stored.prefix) < len(raw) // 2


def test_a_session_authenticates_reads(client: Client, user: User, thread: Thread) -> None:
    client.force_login(user)
    response = client.get("/api/threads")
    assert response.status_code == 200
    assert [t["id"] for t in response.json()] == [str(thread.id)]


def test_a_session_write_without_the_csrf_token_answers_403_and_writes_nothing(user: User) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    response = browser.post("/api/threads", NEW_THREAD, content_type="application/json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]
    assert Thread.objects.count() == 0


def test_a_session_write_with_the_csrf_token_succeeds(user: User) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    browser.get("/api/docs")  # sets the CSRF cookie
    token = browser.cookies["csrftoken"].value
    response = browser.post(
        "/api/threads", NEW_THREAD, content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 201


def test_a_bearer_write_needs_no_csrf_token(user: User, api_token: str) -> None:
    agent = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Bearer {api_token}")
    assert agent.post("/api/threads", NEW_THREAD, content_type="application/json").status_code == 201


@pytest.mark.parametrize("suffix", ["", "/citations", "/export?format=json", "/export?format=markdown"])
def test_another_users_thread_answers_404(
    client: Client, other_user: User, api_client: Client, suffix: str
) -> None:
    theirs = thread_create(owner=other_user, title="Private")
    response = api_client.get(f"/api/threads/{theirs.id}{suffix}")
    assert response.status_code == 404
    assert response.json() == {"detail": "Thread not found.", "code": "not_found"}


def test_appending_to_another_users_thread_answers_404_and_writes_nothing(
    other_user: User, api_client: Client
) -> None:
    theirs = thread_create(owner=other_user, title="Private")
    response = api_client.post(
        f"/api/threads/{theirs.id}/messages",
        {"type": "human", "content": "hi"},
        content_type="application/json",
    )
    assert response.status_code == 404
    assert response.json() == {"detail": "Thread not found.", "code": "not_found"}
    assert Message.objects.count() == 0


def test_a_missing_thread_answers_the_same_404(api_client: Client) -> None:
    response = api_client.get("/api/threads/00000000-0000-4000-8000-000000000000")
    assert (response.status_code, response.json()) == (
        404,
        {"detail": "Thread not found.", "code": "not_found"},
    )


@pytest.mark.parametrize("bad_id", ["not-a-uuid", "1234", "00000000-0000-4000-8000-00000000000g"])
def test_a_malformed_thread_id_answers_422_and_writes_nothing(api_client: Client, bad_id: str) -> None:
    response = api_client.post(
        f"/api/threads/{bad_id}/messages", {"type": "human", "content": "hi"}, content_type="application/json"
    )
    assert response.status_code == 422
    assert response.json()["detail"].startswith(
        "Invalid request: path.thread_id: Input should be a valid UUID"
    )
    assert Message.objects.count() == 0


@pytest.mark.parametrize("header", [None, "Bearer kwt_" + "z" * 43])
@pytest.mark.parametrize("write", ["append", "import"])
def test_appends_and_imports_without_a_valid_token_answer_401_and_write_nothing(
    client: Client, thread: Thread, header: str | None, write: str
) -> None:
    path, body = {
        "append": (f"/api/threads/{thread.id}/messages", {"type": "human", "content": "hi"}),
        "import": ("/api/threads/import", {"title": "t", "messages": [{"type": "human", "content": "hi"}]}),
    }[write]
    extra: dict[str, Any] = {"HTTP_AUTHORIZATION": header} if header else {}
    response = client.post(path, body, content_type="application/json", **extra)
    assert response.status_code == 401
    assert response.json()["detail"] in {
        "Invalid or revoked API token.",
        "Authentication required: send 'Authorization: Bearer <token>' or use a logged-in session.",
    }
    assert (Thread.objects.count(), Message.objects.count()) == (1, 0)
