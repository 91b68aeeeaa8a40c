"""The production server's sizing rule and the typed readers it relies on."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from knowledgeweb.environment import env_choice, env_float, env_int, env_proxy_ssl_header, env_rate
from knowledgeweb.ops.serving import server_settings


def test_defaults_listen_on_loopback_with_a_worker_per_core_and_eight_threads() -> None:
    server = server_settings({}, cpu_count=4)
    assert (server.host, server.port, server.workers, server.threads) == ("127.0.0.1", 8000, 4, 8)
    assert server.capacity == 32
    # Above the default 60 s deadline ceiling.
    assert server.timeout == 90


def test_one_core_still_gets_two_workers() -> None:
    assert server_settings({}, cpu_count=1).workers == 2


def test_host_port_workers_and_threads_come_from_the_environment() -> None:
    env = {"HOST": "0.0.0.0", "PORT": "9000", "WEB_WORKERS": "3", "WEB_THREADS": "16"}  # noqa: S104
    server = server_settings(env, cpu_count=2)
    assert (server.host, server.port, server.workers, server.threads) == ("0.0.0.0", 9000, 3, 16)  # noqa: S104


def test_the_worker_timeout_follows_the_deadline_ceiling() -> None:
    assert server_settings({"KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING": "120"}, cpu_count=2).timeout == 150


def test_a_worker_timeout_at_or_below_the_ceiling_is_refused() -> None:
    with pytest.raises(
        ImproperlyConfigured,
        match=r"WEB_TIMEOUT \(60 s\) must exceed KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING \(60 s\)",
    ):
        server_settings({"WEB_TIMEOUT": "60"}, cpu_count=2)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"PORT": "80000"}, "PORT must be at least 1 and at most 65535, not 80000."),
        ({"PORT": "http"}, "PORT must be a whole number, not 'http'."),
        ({"WEB_WORKERS": "0"}, "WEB_WORKERS must be at least 1"),
        ({"WEB_THREADS": "many"}, "WEB_THREADS must be a whole number"),
        ({"HOST": " "}, "HOST must be an address to listen on"),
        (
            {"KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING": "-5"},
            "KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING must be at least 1 and at most 120, not -5.",
        ),
    ],
)
def test_malformed_server_settings_are_refused_with_their_name(env: dict[str, str], message: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=message.replace("(", r"\(").replace(")", r"\)")):
        server_settings(env, cpu_count=2)


def test_rates_read_counts_and_periods() -> None:
    assert env_rate("R", "60/minute", environ={}) == (60, 60)
    assert env_rate("R", "x", environ={"R": "5/10seconds"}) == (5, 10)
    assert env_rate("R", "x", environ={"R": "1000/Hour"}) == (1000, 3600)
    assert env_rate("R", "x", environ={"R": "off"}) is None


def test_numbers_and_choices_name_the_variable_when_wrong() -> None:
    with pytest.raises(ImproperlyConfigured, match="CACHE_TIMEOUT must be more than 0"):
        env_float("CACHE_TIMEOUT", 0.2, environ={"CACHE_TIMEOUT": "nan"})
    with pytest.raises(ImproperlyConfigured, match=r"N must be at least 2, not 1\."):
        env_int("N", 3, minimum=2, environ={"N": "1"})
    assert env_choice("LOG_FORMAT", ("text", "json"), "text", environ={"LOG_FORMAT": "JSON"}) == "json"


def test_the_proxy_header_is_opt_in_and_spelled_as_a_header() -> None:
    assert env_proxy_ssl_header("H", environ={}) is None
    assert env_proxy_ssl_header("H", environ={"H": "X-Forwarded-Proto"}) == (
        "HTTP_X_FORWARDED_PROTO",
        "https",
    )
    assert env_proxy_ssl_header("H", environ={"H": "X-Scheme=HTTPS"}) == ("HTTP_X_SCHEME", "HTTPS")
