"""Answer models in the admin: the rules shown as form errors, nothing saved until they hold."""

from __future__ import annotations

import html
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.composer.models import AnswerModel

ADD = "/admin/composer/answermodel/add/"


def _form(user: User, **fields: Any) -> dict[str, Any]:
    return {
        "name": "ollama",
        "enabled": "on",
        "base_url": "http://127.0.0.1:11434/v1",
        "model": "llama3.1:8b",
        "api_key_env": "",
        "temperature": "0.2",
        "max_output_tokens": "1024",
        "context_budget": "24000",
        "timeout": "60",
        "users": [str(user.pk)],
        "agent_names": "",
        **fields,
    }


def test_an_answer_model_for_a_local_server_needs_no_key(admin_client: Client, user: User) -> None:
    response = admin_client.post(ADD, _form(user))

    assert response.status_code == 302
    model = AnswerModel.objects.get()
    assert (model.base_url, model.model, model.api_key_env) == (
        "http://127.0.0.1:11434/v1",
        "llama3.1:8b",
        "",
    )
    assert list(model.users.all()) == [user]
    listing = admin_client.get("/admin/composer/answermodel/").content.decode()
    assert "no key (none needed)" in listing


@pytest.mark.parametrize(
    ("fields", "field_error"),
    [
        ({"api_key_env": "SECRET_KEY"}, "must start with KNOWLEDGEWEB_KEY_"),
        ({"api_key_env": "sk-pasted-the-key-itself"}, "Enter the NAME of an environment variable"),
        ({"base_url": "http://user:pw@127.0.0.1/v1"}, "Do not put credentials in the URL"),
        ({"base_url": "ftp://127.0.0.1/v1"}, "Enter a valid http:// or https:// URL."),
        ({"temperature": "3"}, "Enter a temperature from 0 to 2."),
        ({"context_budget": "10"}, "Enter a whole number from 500 to 400,000 characters."),
        ({"timeout": "61"}, "KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING allows at most 60"),
        ({"model": "m" * 201}, "at most 200 characters"),
    ],
)
def test_each_rule_is_a_clear_form_error_and_nothing_is_saved(
    admin_client: Client, user: User, fields: dict[str, str], field_error: str
) -> None:
    response = admin_client.post(ADD, _form(user, **fields))

    assert response.status_code == 200
    assert field_error in html.unescape(response.content.decode())
    assert AnswerModel.objects.count() == 0


def test_the_credential_column_says_whether_the_variable_is_set_never_its_value(
    admin_client: Client, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_ADMIN_TEST", "sk-value-never-shown-123")
    admin_client.post(ADD, _form(user, api_key_env="KNOWLEDGEWEB_KEY_ADMIN_TEST"))
    model = AnswerModel.objects.get()

    page = admin_client.get(f"/admin/composer/answermodel/{model.pk}/change/").content.decode()

    assert "sk-value-never-shown-123" not in page
    assert ">set<" in page or "set</div>" in page
