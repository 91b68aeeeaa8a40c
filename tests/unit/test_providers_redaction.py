"""Credential redaction and the environment-only credential."""

from __future__ import annotations

import pytest

from knowledgeweb.providers.credentials import credential_from_environment
from knowledgeweb.providers.errors import MissingCredentialError
from knowledgeweb.providers.redaction import REDACTED, Redactor

KEY = "sk-synthetic/Key+Value=42"


def test_it_removes_the_key_value_wherever_it_appears() -> None:
    redactor = Redactor([KEY])
    assert redactor.text(f"a {KEY} b {KEY}") == f"a {REDACTED} b {REDACTED}"


def test_it_removes_a_url_encoded_key() -> None:
    assert "Key" not in Redactor([KEY]).text("?key=sk-synthetic%2FKey%2BValue%3D42")


def test_messages_also_lose_any_authorization_or_api_key_header_value() -> None:
    redactor = Redactor()
    message = redactor.message('Authorization: Bearer other-token-123 and "X-API-Key": "zzz-secret"')
    assert "other-token-123" not in message
    assert "zzz-secret" not in message
    assert message.count(REDACTED) == 2


def test_evidence_text_keeps_header_examples_that_are_not_the_key() -> None:
    # Retrieved text must stay as the provider sent it; only the real key goes.
    text = "Send Authorization: Bearer <token> with each call."
    assert Redactor([KEY]).text(text) == text


def test_json_redaction_covers_nested_strings_and_keys() -> None:
    redacted = Redactor([KEY]).json({KEY: [{"x": f"echo {KEY}"}, 3, None]})
    assert redacted == {REDACTED: [{"x": f"echo {REDACTED}"}, 3, None]}


def test_an_empty_secret_redacts_nothing() -> None:
    assert Redactor([""]).text("plain") == "plain"


def test_the_credential_is_read_from_the_named_variable() -> None:
    assert (
        credential_from_environment(
            "KNOWLEDGEWEB_KEY_RAGFLOW", environ={"KNOWLEDGEWEB_KEY_RAGFLOW": f" {KEY}\n"}
        )
        == KEY
    )


@pytest.mark.parametrize(
    "environ", [{}, {"KNOWLEDGEWEB_KEY_RAGFLOW": ""}, {"KNOWLEDGEWEB_KEY_RAGFLOW": "   "}]
)
def test_an_unset_or_blank_variable_is_a_clear_error_naming_only_the_variable(
    environ: dict[str, str],
) -> None:
    with pytest.raises(
        MissingCredentialError, match="KNOWLEDGEWEB_KEY_RAGFLOW that holds this binding's API key is not set"
    ):
        credential_from_environment("KNOWLEDGEWEB_KEY_RAGFLOW", environ=environ)


def test_a_malformed_variable_name_is_refused_without_echoing_it() -> None:
    with pytest.raises(MissingCredentialError) as caught:
        credential_from_environment("ragflow-abc123", environ={})
    assert "ragflow-abc123" not in str(caught.value)
