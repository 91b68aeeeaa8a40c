"""The sign-in limit finds the login pages' paths once per URL configuration, not per POST."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import set_script_prefix

from knowledgeweb.ops import logins

pytestmark = pytest.mark.django_db


def test_posts_reverse_the_login_paths_once(monkeypatch: pytest.MonkeyPatch, api_client: Client) -> None:
    calls: list[str] = []
    real_reverse = logins.reverse

    def counting(name: str, **kwargs: Any) -> str:
        calls.append(name)
        return real_reverse(name, **kwargs)

    monkeypatch.setattr(logins, "reverse", counting)
    logins._login_paths_in.cache_clear()
    for _ in range(3):
        api_client.post("/api/threads", {"title": "t"}, content_type="application/json")
    assert sorted(calls) == ["admin:login", "login"]
    assert logins._login_paths() == frozenset({"/accounts/login/", "/admin/login/"})


def test_the_paths_follow_the_script_prefix() -> None:
    logins._login_paths_in.cache_clear()
    set_script_prefix("/kw/")
    try:
        assert logins._login_paths() == frozenset({"/kw/accounts/login/", "/kw/admin/login/"})
    finally:
        set_script_prefix("/")
    assert logins._login_paths() == frozenset({"/accounts/login/", "/admin/login/"})
