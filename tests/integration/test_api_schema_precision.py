"""The OpenAPI schema says what the API accepts: a search query is never empty, and an
imported message has a real schema that describes every shape the import reads without
refusing any message the import accepts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from jsonschema import Draft202012Validator

from knowledgeweb.api.main import api
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.threads.models import Message, Thread

pytestmark = pytest.mark.django_db


def openapi() -> dict[str, Any]:
    return json.loads(json.dumps(api.get_openapi_schema(path_prefix="/api/")))


def import_items() -> dict[str, Any]:
    """The schema of one message in the import body's titled form (its first branch)."""
    body = openapi()["paths"]["/api/threads/import"]["post"]["requestBody"]["content"]["application/json"]
    titled = body["schema"]["anyOf"][0]
    assert titled["title"] == "Messages with a title"
    items: dict[str, Any] = titled["properties"]["messages"]["items"]
    return items


def item_validator() -> Draft202012Validator:
    schema = import_items()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_the_search_query_carries_min_length_1() -> None:
    query = openapi()["components"]["schemas"]["SearchIn"]["properties"]["query"]
    assert (query["type"], query["minLength"]) == ("string", 1)


def test_an_empty_query_is_refused_as_the_schema_says_and_nothing_is_written(
    api_client: Client, thread: Thread, user: Any
) -> None:
    binding_create(name="local", provider="local", tools=["knowledge_search"], users=[user])
    response = api_client.post(
        "/api/knowledge/search",
        {"tool": "knowledge_search", "query": "", "thread_id": str(thread.id)},
        content_type="application/json",
    )
    assert response.status_code == 422
    assert response.json()["detail"] == "Invalid request: body.query: String should have at least 1 character"
    assert Message.objects.count() == 0


def test_import_message_items_have_a_real_schema() -> None:
    items = import_items()
    assert items != {}
    assert [branch["title"] for branch in items["anyOf"]] == [
        "PlainMessage",
        "WrappedMessage",
        "ConstructorMessage",
        "RoleMessage",
        "ResponsesItem",
    ]
    plain = items["anyOf"][0]
    assert plain["required"] == ["type"]
    assert "human" in plain["properties"]["type"]["enum"]
    assert set(plain["properties"]) >= {"type", "content", "name", "tool_call_id", "artifact", "status"}


# Every shape the import accepts, including keys it ignores: each must be schema-valid too.
ACCEPTED: list[dict[str, Any]] = [
    {"type": "human", "content": "Plain."},
    {"type": "HumanMessage", "content": [{"type": "text", "text": "Parts"}, " and strings."]},
    {"type": "tool", "content": "Out.", "name": "search", "tool_call_id": "c1", "artifact": {"k": 1}},
    {"type": "ai", "content": "With ignored keys.", "additional_kwargs": {}, "response_metadata": {"x": 1}, "id": 7},
    {"type": "system", "content": "s", "name": None, "tool_call_id": None, "status": None, "artifact": None},
    {"type": "ai", "data": {"content": "Wrapped.", "status": "error"}},
    {"type": "human", "data": {"content": "Wrapped."}, "name": 5, "lc": "ignored"},
    {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"],
     "kwargs": {"content": "Constructed.", "tool_call_id": "c2", "name": "search"}},
    {"type": "tool", "content": "Documents.", "name": "retrieve", "tool_call_id": "c3", "artifact": [{"page_content": "x"}]},
    {"role": "user", "content": "An OpenAI message."},
    {"type": "function_call", "call_id": "c4", "name": "search", "arguments": "{}", "id": "fc_1"},
    {"type": "function_call_output", "call_id": "c4", "output": "Out."},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Why."}]},
    {"role": "tool", "tool_call_id": "c4", "content": {"content": [{"type": "text", "text": "An MCP result."}]}},
]  # fmt: skip

# Messages the import refuses that the schema already calls invalid.
REFUSED: list[Any] = [
    "a string",
    {"content": "no type"},
    {"type": "robot", "content": "x"},
    {"type": "human", "content": 5},
    {"type": "human", "content": "x", "status": "maybe"},
    {"type": "human", "content": "x", "name": 3},
]


def test_every_accepted_shape_is_schema_valid_and_imported(api_client: Client) -> None:
    validator = item_validator()
    for message in ACCEPTED:
        assert list(validator.iter_errors(message)) == [], message
    response = api_client.post(
        "/api/threads/import", {"title": "Shapes", "messages": ACCEPTED}, content_type="application/json"
    )
    assert response.status_code == 201, response.content
    assert Thread.objects.get().messages.count() == len(ACCEPTED)


@pytest.mark.parametrize("message", REFUSED)
def test_messages_the_schema_calls_invalid_are_refused_and_nothing_is_written(
    api_client: Client, message: Any
) -> None:
    assert not item_validator().is_valid(message)
    response = api_client.post(
        "/api/threads/import",
        {"title": "Bad", "messages": [{"type": "human", "content": "ok"}, message]},
        content_type="application/json",
    )
    assert response.status_code == 422
    assert response.json()["detail"].startswith("message 2: ")
    assert Thread.objects.count() == 0
