"""The pages' own surfaces keep NUL from the database too: form fields and query strings.

Django's form fields refuse NUL before any query (``ProhibitNullCharactersValidator``), and
a URL or a form cannot carry an unpaired surrogate (percent-decoding gives U+FFFD). These
pass through the same queries a value would reach on PostgreSQL; none may fail, and
nothing may be written.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.test import Client

pytestmark = pytest.mark.django_db


def rows() -> dict[str, Any]:
    return {model._meta.label: model._default_manager.count() for model in apps.get_models()}


@pytest.mark.parametrize(
    "credentials",
    [{"username": "al\x00ice", "password": "alice-password-1"}, {"username": "alice", "password": "x\x00"}],
)
def test_a_sign_in_holding_nul_is_refused_on_the_form(user: User, credentials: dict[str, str]) -> None:
    client = Client()
    before = rows()
    response = client.post("/accounts/login/", credentials)
    assert response.status_code == 200  # the form again, with its error
    assert "_auth_user_id" not in client.session
    after = rows()
    after.pop("sessions.Session", None)
    before.pop("sessions.Session", None)
    assert after == before


@pytest.mark.parametrize(
    "path",
    [
        "/?q=owls%00",
        "/?page=%00",
        "/admin/threads/thread/?q=a%00b",
        "/admin/bindings/knowledgebinding/?q=%00",
        "/admin/auth/user/?q=%00",
    ],
)
def test_a_query_string_holding_nul_never_fails_a_page(user: User, path: str) -> None:
    user.is_staff = user.is_superuser = True
    user.save()
    client = Client()
    client.force_login(user)
    before = rows()
    response = client.get(path)
    assert response.status_code == 200
    assert rows() == before


def test_an_admin_form_holding_nul_is_refused_and_writes_nothing(user: User) -> None:
    user.is_staff = user.is_superuser = True
    user.save()
    client = Client()
    client.force_login(user)
    before = rows()
    response = client.post(
        "/admin/auth/user/add/", {"username": "bo\x00b", "password1": "x-long-1", "password2": "x-long-1"}
    )
    assert response.status_code == 200
    assert "Null characters are not allowed." in response.content.decode()
    assert rows() == before
