"""Configuration read from the environment: typed helpers that fail loudly and clearly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from knowledgeweb.environment import cache_from_url, database_from_url, env_bool, env_int, env_list, env_str

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("raw", "expected"), [("1", True), ("TRUE", True), ("on", True), ("no", False), ("", False)]
)
def test_env_bool_reads_the_usual_spellings(raw: str, expected: bool) -> None:
    assert env_bool("DEBUG", environ={"DEBUG": raw}) is expected


def test_env_bool_refuses_anything_else_and_names_the_variable() -> None:
    with pytest.raises(ImproperlyConfigured, match=r"DEBUG must be a boolean .* not 'maybe'"):
        env_bool("DEBUG", environ={"DEBUG": "maybe"})


def test_env_bool_and_env_str_fall_back_to_their_defaults_when_unset() -> None:
    assert env_bool("DEBUG", default=True, environ={}) is True
    assert env_str("SECRET_KEY", "fallback", environ={}) == "fallback"


def test_env_list_splits_on_commas_and_refuses_empty_items() -> None:
    assert env_list("ALLOWED_HOSTS", [], environ={"ALLOWED_HOSTS": "a.example, b.example"}) == [
        "a.example",
        "b.example",
    ]
    with pytest.raises(ImproperlyConfigured, match="ALLOWED_HOSTS must be a comma-separated list"):
        env_list("ALLOWED_HOSTS", [], environ={"ALLOWED_HOSTS": "a.example,,b.example"})


def test_a_relative_sqlite_url_lands_under_the_project_directory() -> None:
    config = database_from_url("sqlite:///var/db.sqlite3", base_dir="/srv/app")
    assert config == {"ENGINE": "django.db.backends.sqlite3", "NAME": "/srv/app/var/db.sqlite3"}


def test_an_absolute_sqlite_url_is_kept() -> None:
    assert database_from_url("sqlite:////data/db.sqlite3", base_dir="/srv/app")["NAME"] == "/data/db.sqlite3"


def test_a_postgres_url_gives_every_connection_setting() -> None:
    config = database_from_url(
        "postgres://kw:s%40cret@db.example:5433/knowledgeweb?sslmode=require", base_dir="/"
    )
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["NAME"], config["USER"], config["PASSWORD"]) == ("knowledgeweb", "kw", "s@cret")
    assert (config["HOST"], config["PORT"], config["OPTIONS"]) == (
        "db.example",
        "5433",
        {"sslmode": "require", "connect_timeout": 5},
    )
    # Persistent connections only when the production server asks for them.
    assert (config["CONN_MAX_AGE"], config["CONN_HEALTH_CHECKS"]) == (0, False)
    pooled = database_from_url("postgres://db.example/kw", base_dir="/", conn_max_age=60)
    assert (pooled["CONN_MAX_AGE"], pooled["CONN_HEALTH_CHECKS"]) == (60, True)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://db/knowledgeweb", "DATABASE_URL must start with sqlite:// or postgres://"),
        ("postgres://db.example", "must name a database"),
        ("postgres://db.example:notaport/kw", "invalid port"),
        ("sqlite://", "must name a file"),
    ],
)
def test_a_malformed_database_url_is_refused_clearly(url: str, message: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=message):
        database_from_url(url, base_dir="/srv/app")


def test_the_cache_is_local_memory_by_default_and_redis_when_asked() -> None:
    assert cache_from_url("locmem://")["BACKEND"].endswith("LocMemCache")
    redis = cache_from_url("redis://127.0.0.1:6379/1")
    assert redis == {
        "BACKEND": "knowledgeweb.ops.cache.ResilientRedisCache",
        "LOCATION": "redis://127.0.0.1:6379/1",
        "OPTIONS": {"socket_timeout": 0.2, "socket_connect_timeout": 0.2},
    }
    with pytest.raises(ImproperlyConfigured, match="CACHE_URL must start with locmem:// or redis://"):
        cache_from_url("memcached://127.0.0.1")


def _load_settings(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG", "DATABASE_URL"}}
    return subprocess.run(
        [sys.executable, "-c", "import knowledgeweb.settings as s; print(s.DEBUG, len(s.SECRET_KEY))"],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
    )


def test_settings_refuse_to_start_without_a_secret_key_when_debug_is_off() -> None:
    result = _load_settings(DEBUG="0")
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off." in result.stderr


def test_settings_generate_a_development_key_only_in_debug() -> None:
    result = _load_settings(DEBUG="1")
    assert result.returncode == 0, result.stderr
    debug, key_length = result.stdout.split()
    assert debug == "True"
    assert int(key_length) >= 50


def test_a_malformed_debug_value_stops_start_up_with_its_name() -> None:
    result = _load_settings(DEBUG="sometimes", SECRET_KEY="x" * 50)
    assert result.returncode != 0
    assert "DEBUG must be a boolean" in result.stderr


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("lots", "KNOWLEDGEWEB_QUOTA_USER_BYTES must be a whole number, not 'lots'."),
        ("1.5", "KNOWLEDGEWEB_QUOTA_USER_BYTES must be a whole number, not '1.5'."),
        ("0", "KNOWLEDGEWEB_QUOTA_USER_BYTES must be at least 1, not 0."),
        ("-3", "KNOWLEDGEWEB_QUOTA_USER_BYTES must be at least 1, not -3."),
    ],
)
def test_a_malformed_whole_number_names_its_variable(raw: str, message: str) -> None:
    with pytest.raises(ImproperlyConfigured) as caught:
        env_int(
            "KNOWLEDGEWEB_QUOTA_USER_BYTES", 10, minimum=1, environ={"KNOWLEDGEWEB_QUOTA_USER_BYTES": raw}
        )
    assert str(caught.value) == message


def test_a_whole_number_is_read_or_defaults() -> None:
    assert env_int("Q", 10, environ={"Q": " 536_870_912 "}) == 536_870_912
    assert env_int("Q", 10, environ={}) == 10
    assert env_int("Q", 10, environ={"Q": ""}) == 10


def _quota_settings(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import knowledgeweb.settings as s; print(s.QUOTA_THREAD_MESSAGES, s.QUOTA_USER_BYTES)",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_settings_read_the_quotas_and_refuse_a_malformed_one() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KNOWLEDGEWEB_QUOTA_")}
    env.update(DEBUG="1", KNOWLEDGEWEB_QUOTA_THREAD_MESSAGES="250")
    run = _quota_settings(env)
    assert run.stdout.split() == ["250", str(512 * 1024 * 1024)], run.stderr
    env["KNOWLEDGEWEB_QUOTA_USER_BYTES"] = "a lot"
    run = _quota_settings(env)
    assert run.returncode != 0
    assert "KNOWLEDGEWEB_QUOTA_USER_BYTES must be a whole number, not 'a lot'." in run.stderr
