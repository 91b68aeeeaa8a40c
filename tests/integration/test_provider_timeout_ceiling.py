"""A binding's timeout cannot exceed KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING: on save, in the admin and at use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.test import Client, override_settings

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.environment import env_int
from tests.synthetic import LIGHTRAG_URL, serving

ROOT = Path(__file__).resolve().parents[2]
LIGHTRAG: dict[str, Any] = {
    "name": "lightrag-main",
    "provider": "lightrag",
    "base_url": LIGHTRAG_URL,
    "api_key_env": "KNOWLEDGEWEB_KEY_LIGHTRAG",
    "tools": ["knowledge_search"],
}


@pytest.mark.django_db
def test_a_timeout_over_the_ceiling_is_refused_and_nothing_is_saved() -> None:
    with (
        override_settings(KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING=10),
        pytest.raises(ValidationError) as caught,
    ):
        binding_create(**LIGHTRAG, timeout=11)
    assert caught.value.message_dict["timeout"] == [
        "Enter a whole number from 1 to 10 seconds: the timeout bounds a whole search, and "
        "KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING allows at most 10."
    ]
    assert KnowledgeBinding.objects.count() == 0
    with override_settings(KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING=10):
        assert binding_create(**LIGHTRAG, timeout=10).timeout == 10


@pytest.mark.django_db
def test_a_binding_above_a_lowered_ceiling_is_refused_at_use_with_nothing_sent(
    user: User, api_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serving(monkeypatch) as upstream:
        binding_create(**LIGHTRAG, users=[user], timeout=30)
        with override_settings(KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING=20):
            response = api_client.post(
                "/api/knowledge/search",
                {"tool": "knowledge_search", "query": "who founded acme?"},
                content_type="application/json",
            )
            capabilities = api_client.get("/api/knowledge/capabilities").json()
    assert response.status_code == 403
    body = response.json()
    assert body["code"] == "binding_misconfigured"
    assert "KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING allows at most 20" in body["detail"]
    assert upstream.requests == []
    assert capabilities["tools"] == []


@pytest.mark.django_db
def test_the_admin_form_shows_and_enforces_the_ceiling(user: User) -> None:
    admin = User.objects.create_superuser("admin", "admin@example.test", "admin-password-1")
    client = Client()
    client.force_login(admin)
    form = {
        "name": "lightrag-main", "provider": "lightrag", "enabled": "on", "base_url": LIGHTRAG_URL,
        "api_key_env": "KNOWLEDGEWEB_KEY_LIGHTRAG", "agent_names": "", "tools": ["knowledge_search"],
        "top_k": "20", "timeout": "61", "scope": "all", "selection": "", "users": [user.pk],
    }  # fmt: skip
    page = client.get("/admin/bindings/knowledgebinding/add/").content.decode()
    assert 'name="timeout" value="30" min="1" max="60"' in page
    assert "one deadline for the whole search" in page
    refused = client.post("/admin/bindings/knowledgebinding/add/", form)
    assert refused.status_code == 200
    assert "KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING allows at most 60." in refused.content.decode()
    assert KnowledgeBinding.objects.count() == 0


def test_the_ceiling_is_read_as_a_bounded_whole_number() -> None:
    name = "KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING"
    assert env_int(name, 60, minimum=1, maximum=120, environ={}) == 60
    assert env_int(name, 60, minimum=1, maximum=120, environ={name: " 45 "}) == 45
    with pytest.raises(ImproperlyConfigured, match=f"{name} must be a whole number, not 'soon'"):
        env_int(name, 60, minimum=1, maximum=120, environ={name: "soon"})
    with pytest.raises(ImproperlyConfigured, match=f"{name} must be at least 1 and at most 120, not 0"):
        env_int(name, 60, minimum=1, maximum=120, environ={name: "0"})


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "60 300"),
        ({"KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING": "15", "KNOWLEDGEWEB_RAGFLOW_SELECTION_TTL": "0"}, "15 0"),
    ],
)
def test_settings_read_the_ceiling_and_the_selection_ttl(env: dict[str, str], expected: str) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KNOWLEDGEWEB_")}
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import knowledgeweb.settings as s; "
            "print(s.KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING, s.KNOWLEDGEWEB_RAGFLOW_SELECTION_TTL)",
        ],
        cwd=ROOT,
        env={**clean, "DEBUG": "1", **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected


def test_a_ceiling_past_120_stops_start_up_with_its_name() -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KNOWLEDGEWEB_")}
    result = subprocess.run(
        [sys.executable, "-c", "import knowledgeweb.settings"],
        cwd=ROOT,
        env={**clean, "DEBUG": "1", "KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING": "600"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert (
        "KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING must be at least 1 and at most 120, not 600." in result.stderr
    )
