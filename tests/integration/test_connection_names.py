"""Bindings and answer models share one set of name, URL and agent-name rules.

Tested through the call sites (``binding_problems``, ``answer_model_problems`` and the
saves behind them), not through the patterns: the answer model's name was once checked
with an unanchored ``re.match``, which a test of the pattern alone could not see.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.rules import binding_problems
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.composer.errors import ModelError, ModelFault
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.composer.rules import answer_model_problems
from knowledgeweb.composer.selectors import answer_model_key

pytestmark = pytest.mark.django_db

NAME_RULE = "Use 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit."

BINDING: dict[str, Any] = {
    "name": "ragflow-main",
    "provider": "ragflow",
    "base_url": "https://ragflow.example.test",
    "api_key_env": "KNOWLEDGEWEB_KEY_RAGFLOW",
    "agent_names": [],
    "tools": ["knowledge_search"],
    "top_k": 20,
    "timeout": 30,
    "scope": "all",
    "selection": [],
}
ANSWER_MODEL: dict[str, Any] = {
    "name": "ollama",
    "base_url": "http://127.0.0.1:11434/v1",
    "model": "llama3.1:8b",
    "api_key_env": "",
    "temperature": 0.2,
    "max_output_tokens": 1024,
    "context_budget": 24_000,
    "timeout": 60,
    "agent_names": [],
}

BAD_NAMES = [
    pytest.param("bad name!", id="space-and-bang"),
    pytest.param("x/../y", id="path"),
    pytest.param("a" * 150, id="150-letters"),
    pytest.param("a" * 101, id="101-letters"),
    pytest.param("ok\n", id="trailing-newline"),
    pytest.param("-leading-dash", id="leading-dash"),
    pytest.param("", id="empty"),
    pytest.param("naïve", id="non-ascii"),
]
GOOD_NAMES = ["ollama", "product-docs", "a", "v1.2_test", "a" * 100]

BAD_URLS = [
    pytest.param("ftp://127.0.0.1/v1", "Enter a valid http:// or https:// URL.", id="scheme"),
    pytest.param("http://user:pw@127.0.0.1/v1", "Do not put credentials in the URL", id="credentials"),
    pytest.param("http://127.0.0.1/v1?x=1", "must not have a query string", id="query"),
    pytest.param("http://127.0.0.1:99999/v1", "Enter a valid http:// or https:// URL.", id="port"),
    pytest.param("http://127.0.0.1/v1 extra", "no spaces or control characters", id="space"),
    pytest.param("http://127.0.0.1/\nv1", "no spaces or control characters", id="newline"),
    pytest.param("http://h.test/" + "p" * 2048, "at most 2048 characters", id="too-long"),
]
BAD_AGENT_NAMES = [
    pytest.param([" spaced"], "blank or has surrounding spaces", id="spaces"),
    pytest.param(["a" * 101], "longer than 100 characters", id="long"),
    pytest.param(["claude", "claude"], "listed twice", id="twice"),
    pytest.param(["bad\x00agent"], "contains a control character", id="nul"),
    pytest.param("claude", "must be a list of names", id="not-a-list"),
]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_bad_name_is_refused_for_a_binding_and_an_answer_model_alike(name: str) -> None:
    assert binding_problems(**{**BINDING, "name": name}).get("name") == [NAME_RULE]
    assert answer_model_problems(**{**ANSWER_MODEL, "name": name}).get("name") == [NAME_RULE]


@pytest.mark.parametrize("name", GOOD_NAMES)
def test_a_good_name_is_accepted_by_both(name: str) -> None:
    assert binding_problems(**{**BINDING, "name": name}) == {}
    assert answer_model_problems(**{**ANSWER_MODEL, "name": name}) == {}


@pytest.mark.parametrize(("url", "message"), BAD_URLS)
def test_a_bad_base_url_gets_the_same_message_for_both(url: str, message: str) -> None:
    for problems in (
        binding_problems(**{**BINDING, "base_url": url}),
        answer_model_problems(**{**ANSWER_MODEL, "base_url": url}),
    ):
        assert list(problems) == ["base_url"]
        assert message in problems["base_url"][0]


@pytest.mark.parametrize(("agent_names", "message"), BAD_AGENT_NAMES)
def test_bad_agent_names_get_the_same_message_for_both(agent_names: object, message: str) -> None:
    for problems in (
        binding_problems(**{**BINDING, "agent_names": agent_names}),
        answer_model_problems(**{**ANSWER_MODEL, "agent_names": agent_names}),
    ):
        assert list(problems) == ["agent_names"]
        assert message in problems["agent_names"][0]


@pytest.mark.parametrize("name", ["bad name!", "x/../y", "a" * 150])
def test_an_answer_model_with_a_bad_name_is_not_saved(name: str) -> None:
    model = AnswerModel(**{**ANSWER_MODEL, "name": name})
    # Only the rules speak about the name (not the column's own max_length check).
    with pytest.raises(ValidationError) as caught:
        model.full_clean(exclude=["name"])
    assert NAME_RULE in caught.value.message_dict["name"]
    assert AnswerModel.objects.count() == 0


@pytest.mark.parametrize("name", ["bad name!", "x/../y", "a" * 150])
def test_a_binding_with_a_bad_name_is_not_saved(name: str) -> None:
    fields = {key: BINDING[key] for key in ("provider", "base_url", "api_key_env", "tools")}
    with pytest.raises(ValidationError) as caught:
        binding_create(name=name, **fields)
    assert NAME_RULE in caught.value.message_dict["name"]
    assert KnowledgeBinding.objects.count() == 0


def test_an_answer_model_renamed_in_the_database_is_refused_at_use_without_a_request() -> None:
    model = AnswerModel.objects.create(**ANSWER_MODEL)
    AnswerModel.objects.filter(pk=model.pk).update(name="bad name!")
    model.refresh_from_db()

    with pytest.raises(ModelError) as caught:
        answer_model_key(model)

    assert caught.value.code == ModelFault.MISCONFIGURED
    assert f"name: {NAME_RULE}" in caught.value.message
