"""Fixtures shared by every suite: users, a thread, an API client holding a token, retrieval messages."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

from knowledgeweb.accounts.services import token_create
from knowledgeweb.knowledge import RetrievalResult, format_result_view
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import message_append, thread_create


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Browser tests run last: once Playwright has started, its event loop stays in the main
    thread for the rest of the session, and only browser tests may make ORM calls beside it."""
    items.sort(key=lambda item: item.nodeid.startswith("tests/e2e/"))


@pytest.fixture(scope="session", autouse=True)
def _empty_cache(django_db_setup: None) -> Iterator[None]:
    """Start and end with an empty cache: under ``CACHE_URL=redis://...`` it outlives the run."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _fresh_rate_limits(settings: Any) -> None:
    """Each test counts its rate limits afresh, so no test locks out another (even on a shared Redis)."""
    settings.RATE_LIMIT_NAMESPACE = f"rl-test-{uuid.uuid4().hex}"


@pytest.fixture
def user(db: None) -> User:
    return User.objects.create_user("alice", password="alice-password-1")


@pytest.fixture
def other_user(db: None) -> User:
    return User.objects.create_user("bob", password="bob-password-1")


@pytest.fixture
def thread(user: User) -> Thread:
    return thread_create(owner=user, title="A thread", agent_name="tester")


@pytest.fixture
def api_token(user: User) -> str:
    """A raw personal API token for ``user``."""
    _, raw = token_create(user=user, name="tests")
    return raw


@pytest.fixture
def api_client(api_token: str) -> Client:
    """A Django test client that authenticates every request as ``user`` with a bearer token."""
    return Client(HTTP_AUTHORIZATION=f"Bearer {api_token}")


@pytest.fixture
def append_retrieval() -> Callable[..., Message]:
    """Append a real ``format_result`` tool message, as the retrieval service would (trusted)."""

    def append(
        thread: Thread, result: RetrievalResult, *, name: str = "knowledge_search", **format_options: Any
    ) -> Message:
        formatted = format_result_view(result, **format_options)
        return message_append(
            thread=thread,
            type="tool",
            name=name,
            content=formatted.content,
            artifact=formatted.artifact,
            trusted=True,
            tool_view=formatted.view,
        )

    return append
