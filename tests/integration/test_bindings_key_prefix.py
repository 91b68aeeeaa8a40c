"""A binding's key variable must start with KNOWLEDGEWEB_KEY_: in the admin, the model and at use."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.selectors import binding_credential_is_set
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.providers.client import transport_override
from knowledgeweb.providers.credentials import credential_from_environment
from knowledgeweb.providers.errors import MissingCredentialError
from knowledgeweb.retrieval import RetrievalRefusedError, retrieval_capabilities, retrieval_search
from knowledgeweb.threads.models import Message
from tests.synthetic import (
    LIGHTRAG_KEY,
    LIGHTRAG_URL,
    RAGFLOW_URL,
    Upstream,
    by_host,
    lightrag_routes,
    ragflow_routes,
    synthetic_lightrag_success,
)

pytestmark = pytest.mark.django_db

PREFIX_MESSAGE = "must start with KNOWLEDGEWEB_KEY_"
ADD_URL = "/admin/bindings/knowledgebinding/add/"
LIST_URL = "/admin/bindings/knowledgebinding/"
# The app's own settings, and names that merely look like key variables.
REFUSED_NAMES = ["SECRET_KEY", "DATABASE_URL", "CACHE_URL", "RAGFLOW_API_KEY", "KNOWLEDGEWEB_KEY_", "PATH"]


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch) -> Iterator[Upstream]:
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_LIGHTRAG", LIGHTRAG_KEY)
    monkeypatch.setenv("DATABASE_URL", "postgres://app:db-password-not-to-leak@db.example.test/app")
    server = Upstream(
        by_host(
            {
                "ragflow.example.test": ragflow_routes(),
                "lightrag.example.test": lightrag_routes(synthetic_lightrag_success()),
            }
        )
    )
    with transport_override(server.transport):
        yield server


@pytest.fixture
def admin_client(db: None) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("admin", "admin@example.test", "admin-password-1"))
    return client


def lightrag_fields(**changes: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "name": "lightrag-main",
        "provider": "lightrag",
        "base_url": LIGHTRAG_URL,
        "api_key_env": "KNOWLEDGEWEB_KEY_LIGHTRAG",
        "tools": ["knowledge_search"],
    }
    fields.update(changes)
    return fields


@pytest.mark.parametrize("name", REFUSED_NAMES)
def test_the_admin_form_refuses_a_key_variable_without_the_prefix(admin_client: Client, name: str) -> None:
    response = admin_client.post(
        ADD_URL,
        {
            "name": "ragflow-main",
            "provider": "ragflow",
            "enabled": "on",
            "base_url": RAGFLOW_URL,
            "api_key_env": name,
            "tools": ["knowledge_search"],
            "top_k": "20",
            "timeout": "30",
            "scope": "all",
        },
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert PREFIX_MESSAGE in page
    assert "SECRET_KEY, DATABASE_URL or CACHE_URL" in page
    assert "errorlist" in page
    assert KnowledgeBinding.objects.count() == 0


def test_the_admin_form_saves_a_prefixed_key_variable(
    admin_client: Client, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_RAGFLOW", "synthetic-ragflow-key")  # else the admin asks first
    response = admin_client.post(
        ADD_URL,
        {
            "users": [user.pk],
            "name": "ragflow-main",
            "provider": "ragflow",
            "enabled": "on",
            "base_url": RAGFLOW_URL,
            "api_key_env": "KNOWLEDGEWEB_KEY_RAGFLOW",
            "tools": ["knowledge_search"],
            "top_k": "20",
            "timeout": "30",
            "scope": "all",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert KnowledgeBinding.objects.get().api_key_env == "KNOWLEDGEWEB_KEY_RAGFLOW"


@pytest.mark.parametrize("name", REFUSED_NAMES)
@pytest.mark.parametrize("provider", ["ragflow", "lightrag"])
def test_model_validation_refuses_a_key_variable_without_the_prefix(name: str, provider: str) -> None:
    url = RAGFLOW_URL if provider == "ragflow" else LIGHTRAG_URL
    with pytest.raises(ValidationError) as caught:
        binding_create(**lightrag_fields(provider=provider, base_url=url, api_key_env=name))
    (message,) = caught.value.message_dict["api_key_env"]
    assert PREFIX_MESSAGE in message
    assert KnowledgeBinding.objects.count() == 0


def test_the_refusal_never_repeats_what_was_typed() -> None:
    # An admin may paste the key itself where its variable's name belongs.
    pasted = "sk_live_0123456789abcdef"
    with pytest.raises(ValidationError) as caught:
        binding_create(**lightrag_fields(api_key_env=pasted))
    assert pasted not in str(caught.value)


def test_a_provider_that_needs_no_key_leaves_the_variable_empty(user: User) -> None:
    binding = binding_create(name="local", provider="local", tools=["knowledge_search"], users=[user])
    assert binding.api_key_env == ""


@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL", "CACHE_URL"])
def test_a_binding_edited_in_the_database_is_refused_at_use_with_no_request(
    upstream: Upstream, user: User, name: str
) -> None:
    binding = binding_create(**lightrag_fields(users=[user]))
    # Only a direct database edit can store such a name now; the service must still refuse it.
    KnowledgeBinding.objects.filter(pk=binding.pk).update(api_key_env=name)
    with pytest.raises(RetrievalRefusedError, match=PREFIX_MESSAGE) as caught:
        retrieval_search(user=user, tool="knowledge_search", query="who founded acme?")
    assert upstream.requests == []
    assert settings.SECRET_KEY not in str(caught.value)
    assert "db-password-not-to-leak" not in str(caught.value)
    assert Message.objects.count() == 0
    # Not even advertised: the capabilities list leaves it out.
    assert retrieval_capabilities(user=user, agent_name="") == []


@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL", "PATH", "KNOWLEDGEWEB_KEY_"])
def test_reading_a_credential_refuses_a_variable_without_the_prefix_even_when_set(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv(name, "value-that-must-never-be-read")
    with pytest.raises(MissingCredentialError, match="does not start with KNOWLEDGEWEB_KEY_") as caught:
        credential_from_environment(name)
    assert "value-that-must-never-be-read" not in str(caught.value)
    binding = KnowledgeBinding(provider="lightrag", api_key_env=name)
    assert binding_credential_is_set(binding=binding) is False


def test_reading_a_prefixed_credential_works(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_X", "  the-key  ")
    assert credential_from_environment("KNOWLEDGEWEB_KEY_X") == "the-key"


def _stored(
    name: str, api_key_env: str, *, provider: str = "lightrag", enabled: bool = True
) -> KnowledgeBinding:
    """A row as an older release could have saved it (bypassing today's rules)."""
    return KnowledgeBinding.objects.create(
        name=name,
        provider=provider,
        base_url="" if provider == "local" else LIGHTRAG_URL,
        api_key_env=api_key_env,
        tools=["knowledge_search"],
        enabled=enabled,
    )


def test_the_migration_disables_bindings_naming_another_variable_and_renames_nothing() -> None:
    old = _stored("old", "LIGHTRAG_API_KEY")
    secret = _stored("secret", "SECRET_KEY")
    bare = _stored("bare", "KNOWLEDGEWEB_KEY_")
    good = _stored("good", "KNOWLEDGEWEB_KEY_LIGHTRAG")
    local = _stored("local", "", provider="local")
    off = _stored("off", "KNOWLEDGEWEB_KEY_OTHER", enabled=False)
    migration = importlib.import_module(
        "knowledgeweb.bindings.migrations.0003_disable_unprefixed_key_variables"
    )
    migration.disable_unprefixed_key_variables(apps, None)
    state = {b.name: (b.enabled, b.api_key_env) for b in KnowledgeBinding.objects.all()}
    assert state == {
        old.name: (False, "LIGHTRAG_API_KEY"),
        secret.name: (False, "SECRET_KEY"),
        bare.name: (False, "KNOWLEDGEWEB_KEY_"),
        good.name: (True, "KNOWLEDGEWEB_KEY_LIGHTRAG"),
        local.name: (True, ""),
        off.name: (False, "KNOWLEDGEWEB_KEY_OTHER"),
    }


def test_the_migration_is_part_of_the_bindings_history() -> None:
    from django.db.migrations.loader import MigrationLoader

    loader = MigrationLoader(None, ignore_no_migrations=True)
    migration = loader.get_migration("bindings", "0003_disable_unprefixed_key_variables")
    assert ("bindings", "0002_binding_display_and_modes") in migration.dependencies
    (leaf,) = loader.graph.leaf_nodes("bindings")
    assert ("bindings", "0003_disable_unprefixed_key_variables") in loader.graph.forwards_plan(leaf)


def test_the_admin_says_which_binding_to_rename_and_to_what(admin_client: Client) -> None:
    _stored("old-lightrag", "LIGHTRAG_API_KEY", enabled=False)
    _stored("good", "KNOWLEDGEWEB_KEY_LIGHTRAG")
    listing = admin_client.get(LIST_URL).content.decode()
    assert (
        "Binding &#x27;old-lightrag&#x27; is disabled: its key variable LIGHTRAG_API_KEY does not start with "
        "KNOWLEDGEWEB_KEY_. To use it again, rename it in your environment to e.g. "
        "KNOWLEDGEWEB_KEY_LIGHTRAG_API_KEY, enter the new name in &#x27;API key env&#x27;, and enable the binding."
    ) in listing
    assert "refused: rename to KNOWLEDGEWEB_KEY_" in listing
    assert "&#x27;good&#x27;" not in listing
    change = admin_client.get(f"{LIST_URL}{KnowledgeBinding.objects.get(name='old-lightrag').pk}/change/")
    assert "does not start with KNOWLEDGEWEB_KEY_" in change.content.decode()
    # Flagged, never renamed.
    assert KnowledgeBinding.objects.get(name="old-lightrag").api_key_env == "LIGHTRAG_API_KEY"


def test_the_admin_never_repeats_a_stored_value_that_is_not_a_name(admin_client: Client) -> None:
    _stored("pasted", "sk-live key with spaces", enabled=False)
    listing = admin_client.get(LIST_URL).content.decode()
    assert "Binding &#x27;pasted&#x27; is disabled: its key variable is not a valid name." in listing
    assert "sk-live key with spaces" not in listing.split("messagelist")[1].split("</ul>")[0]
