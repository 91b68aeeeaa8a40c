"""Limits hold across window boundaries: the clock is moved, never slept on.

Issue 22, defect 8: the sign-in limit was a fixed window, so 12 wrong passwords sent
across a minute boundary all passed a limit of 10 a minute.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.ops import ratelimit

pytestmark = pytest.mark.django_db

MINUTE = 60
#: A minute boundary, far from any real clock's.
BOUNDARY = 1_000_000 * MINUTE


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    moved = Clock(BOUNDARY - 5)
    monkeypatch.setattr(ratelimit, "clock", moved)
    return moved


def sign_in(client: Client, password: str) -> int:
    return client.post("/accounts/login/", {"username": "alice", "password": password}).status_code


def test_twelve_wrong_passwords_across_a_minute_boundary_are_limited(
    settings: Any, user: User, clock: Clock
) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login_failure": (10, MINUTE)}
    client = Client()
    before = [sign_in(client, "wrong") for _ in range(6)]  # the last 5 s of a minute
    clock.now = BOUNDARY + 5  # the first 5 s of the next
    after = [sign_in(client, "wrong") for _ in range(6)]

    # The failed form re-renders (200) ten times; then 429, as within one minute.
    assert before + after == [200] * 10 + [429] * 2
    # The right password waits too: the limit stops guessing, not typing.
    assert sign_in(client, "alice-password-1") == 429
    assert "_auth_user_id" not in client.session


def test_retry_after_is_when_the_next_attempt_is_allowed(settings: Any, user: User, clock: Clock) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login_failure": (3, MINUTE)}
    client = Client()
    assert [sign_in(client, "wrong") for _ in range(3)] == [200, 200, 200]
    refused = client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
    assert refused.status_code == 429
    wait = int(refused["Retry-After"])
    assert 1 <= wait <= 2 * MINUTE

    clock.now += wait - 1
    assert sign_in(client, "wrong") == 429  # a second early
    clock.now += 1
    assert sign_in(client, "alice-password-1") == 302  # on time


def test_the_previous_window_weighs_less_as_it_recedes(settings: Any, clock: Clock) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "search": (4, MINUTE)}
    clock.now = BOUNDARY - 1
    for _ in range(4):
        ratelimit.consume("search", "token:t")
    with pytest.raises(ratelimit.RateLimited):
        ratelimit.consume("search", "token:t")
    # 30 s into the next minute, the last minute's 4 count as 2: two more fit, not a third.
    clock.now = BOUNDARY + 30
    ratelimit.consume("search", "token:t")
    ratelimit.consume("search", "token:t")
    with pytest.raises(ratelimit.RateLimited):
        ratelimit.consume("search", "token:t")
    # Other keys and scopes are counted apart.
    ratelimit.consume("search", "token:u")
    ratelimit.consume("write", "token:t")


def test_a_refused_request_takes_no_slot(settings: Any, clock: Clock) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "write": (2, MINUTE)}
    clock.now = BOUNDARY
    ratelimit.consume("write", "k")
    ratelimit.consume("write", "k")
    waits = []
    for _ in range(5):  # a client retrying too early
        with pytest.raises(ratelimit.RateLimited) as refused:
            ratelimit.consume("write", "k")
        waits.append(refused.value.retry_after)
    # Retrying did not push the wait further out.
    assert len(set(waits)) == 1
    clock.now += waits[0]
    ratelimit.consume("write", "k")
