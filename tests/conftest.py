"""Fixtures shared by every suite: users, a thread, and an API client holding a token."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.services import thread_create, token_create


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
