"""HTTPS behind a proxy, configured from the environment: deploy checks, cookies, CSRF through the proxy."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.integration.serving_support import PRODUCTION_KEY, base_env, load_settings, run_manage

PRODUCTION = {
    "SECRET_KEY": PRODUCTION_KEY,
    "ALLOWED_HOSTS": "kw.example",
    "CSRF_TRUSTED_ORIGINS": "https://kw.example",
    "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto",
    "SECURE_SSL_REDIRECT": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "SECURE_HSTS_PRELOAD": "1",
    "TRUSTED_PROXY_COUNT": "1",
}


def test_check_deploy_finds_nothing_in_a_production_environment() -> None:
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", env=base_env(**PRODUCTION))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout
    assert "WARNING" not in result.stdout + result.stderr


def test_check_deploy_still_warns_when_https_is_not_configured() -> None:
    # The test above can fail: the same check with only the bare minimum complains.
    env = base_env(SECRET_KEY=PRODUCTION_KEY, ALLOWED_HOSTS="kw.example")
    result = run_manage("check", "--deploy", env=env)
    assert "security.W004" in result.stderr  # HSTS
    assert "security.W008" in result.stderr  # SSL redirect


def test_the_environment_sets_every_https_setting() -> None:
    values = load_settings(
        base_env(**PRODUCTION),
        "SECURE_PROXY_SSL_HEADER",
        "CSRF_TRUSTED_ORIGINS",
        "SECURE_SSL_REDIRECT",
        "SECURE_HSTS_SECONDS",
        "TRUSTED_PROXY_COUNT",
        "SESSION_COOKIE_SECURE",
        "CSRF_COOKIE_SECURE",
        "SESSION_COOKIE_HTTPONLY",
        "CSRF_COOKIE_HTTPONLY",
    )
    assert values == {
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
        "CSRF_TRUSTED_ORIGINS": ["https://kw.example"],
        "SECURE_SSL_REDIRECT": True,
        "SECURE_HSTS_SECONDS": 31536000,
        "TRUSTED_PROXY_COUNT": 1,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SESSION_COOKIE_HTTPONLY": True,
        "CSRF_COOKIE_HTTPONLY": True,
    }


def test_cookies_are_secure_once_debug_is_off_unless_a_plain_http_trial_says_so() -> None:
    names = ("SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_PROXY_SSL_HEADER")
    assert load_settings(base_env(DEBUG="1"), *names) == dict.fromkeys(names[:2], False) | {names[2]: None}
    assert load_settings(base_env(SECRET_KEY=PRODUCTION_KEY), *names[:2]) == dict.fromkeys(names[:2], True)
    trial = load_settings(base_env(SECRET_KEY=PRODUCTION_KEY, SECURE_COOKIES="0"), *names[:2])
    assert trial == dict.fromkeys(names[:2], False)


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("SECURE_PROXY_SSL_HEADER", "X Forwarded Proto", "SECURE_PROXY_SSL_HEADER must be a header name"),
        ("SECURE_HSTS_SECONDS", "a year", "SECURE_HSTS_SECONDS must be a whole number"),
        ("SECURE_HSTS_SECONDS", "-1", "SECURE_HSTS_SECONDS must be at least 0"),
        ("TRUSTED_PROXY_COUNT", "11", "TRUSTED_PROXY_COUNT must be at least 0 and at most 10"),
        ("CSRF_TRUSTED_ORIGINS", "https://a.example,", "CSRF_TRUSTED_ORIGINS must be a comma-separated list"),
        ("SECURE_COOKIES", "perhaps", "SECURE_COOKIES must be a boolean"),
    ],
)
def test_a_malformed_https_setting_stops_start_up_with_its_name(
    variable: str, value: str, message: str
) -> None:
    result = run_manage("check", env=base_env(**{**PRODUCTION, variable: value}))
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert message in result.stderr


def _csrf_from(page: str) -> str:
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert match, page
    return match.group(1)


@pytest.fixture
def behind_proxy(settings: Any, user: User) -> Client:
    settings.ALLOWED_HOSTS = ["kw.example"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://kw.example"]
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    settings.SECURE_SSL_REDIRECT = True
    # The proxy terminates TLS and forwards plain HTTP with this header.
    return Client(enforce_csrf_checks=True, HTTP_HOST="kw.example", HTTP_X_FORWARDED_PROTO="https")


def _log_in(client: Client) -> Any:
    page = client.get("/accounts/login/")
    assert page.status_code == 200, page.status_code
    assert page.cookies["csrftoken"]["secure"] is True
    assert page.cookies["csrftoken"]["httponly"] is True
    return client.post(
        "/accounts/login/",
        {
            "username": "alice",
            "password": "alice-password-1",
            "csrfmiddlewaretoken": _csrf_from(page.content.decode()),
        },
        HTTP_ORIGIN="https://kw.example",
        HTTP_REFERER="https://kw.example/accounts/login/",
    )


def test_a_login_through_the_https_proxy_passes_csrf(behind_proxy: Client, settings: Any) -> None:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    response = _log_in(behind_proxy)
    assert response.status_code == 302, response.content[:500]
    assert response["Location"] == "/"
    session = response.cookies["sessionid"]
    assert (session["secure"], session["httponly"]) == (True, True)
    assert behind_proxy.get("/").status_code == 200


def test_without_trusting_the_proxy_header_the_same_login_is_redirected_not_accepted(
    behind_proxy: Client, settings: Any
) -> None:
    # What operators met before: Django sees plain HTTP and redirects every request to HTTPS.
    settings.SECURE_PROXY_SSL_HEADER = None
    assert behind_proxy.get("/accounts/login/").status_code == 301


def test_hsts_is_sent_on_https_responses(behind_proxy: Client, settings: Any) -> None:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_HSTS_SECONDS = 31536000
    response = behind_proxy.get("/accounts/login/")
    assert response["Strict-Transport-Security"] == "max-age=31536000"
