"""Recorded threads are whole (issue 28, item 4): ``POST /api/threads/{id}/messages`` reads
``tool_calls`` and ``parts`` exactly as an import reads them, and refuses unknown keys with a
422 naming them, writing nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.threads.interchange.imports import thread_import_body
from knowledgeweb.threads.models import Message, Thread
from tests.factories import logged_in

pytestmark = pytest.mark.django_db

LANGCHAIN_CALL = {"id": "call_1", "name": "knowledge_search", "args": {"query": "owls"}, "type": "tool_call"}
OPENAI_CALL = {
    "id": "call_2",
    "type": "function",
    "function": {"name": "knowledge_search", "arguments": '{"query": "herons"}'},
}
PARTS = [{"type": "thinking", "text": "Search first."}, {"type": "refusal", "text": "Not that."}]


def post(client: Client, thread: Thread, body: Any) -> Any:
    return client.post(
        f"/api/threads/{thread.id}/messages", json.dumps(body), content_type="application/json"
    )


def rows() -> dict[str, int]:
    return {model._meta.label: model._default_manager.count() for model in apps.get_models()}


@pytest.mark.parametrize(
    "message",
    [
        {"type": "ai", "content": "", "tool_calls": [LANGCHAIN_CALL, OPENAI_CALL]},
        {"type": "ai", "content": "Owls hunt at night.", "tool_calls": [OPENAI_CALL], "parts": PARTS},
        {
            "type": "human",
            "content": "What do owls eat?",
            "parts": [{"type": "image", "media_type": "image/png", "url": ""}],
        },
        {
            "type": "ai",
            "content": "Bad arguments kept.",
            "tool_calls": [{**OPENAI_CALL, "function": {"name": "f", "arguments": "{not json"}}],
        },
    ],
    ids=["langchain and openai calls", "calls and parts", "a question with an image", "unparsed arguments"],
)
def test_an_append_stores_tool_calls_and_parts_as_an_import_of_the_same_message(
    api_client: Client, user: User, thread: Thread, message: dict[str, Any]
) -> None:
    response = post(api_client, thread, message)
    assert response.status_code == 201, response.content
    appended = Message.objects.get(thread=thread)
    imported = Message.objects.get(thread=thread_import_body(owner=user, body={"messages": [message]}))
    assert appended.tool_calls == imported.tool_calls
    assert appended.parts == imported.parts
    assert (appended.content, appended.digest) == (imported.content, imported.digest)
    assert response.json()["tool_calls"] == appended.tool_calls
    assert response.json()["parts"] == appended.parts
    if "tool_calls" in message:
        assert [call["name"] for call in appended.tool_calls] == [
            call.get("name") or call["function"]["name"] for call in message["tool_calls"]
        ]
        assert appended.tool_calls


def test_calls_are_stored_in_the_stored_form_whatever_form_they_came_in(
    api_client: Client, thread: Thread
) -> None:
    response = post(
        api_client, thread, {"type": "ai", "content": "", "tool_calls": [LANGCHAIN_CALL, OPENAI_CALL]}
    )
    assert response.status_code == 201
    assert Message.objects.get(thread=thread).tool_calls == [
        {"id": "call_1", "name": "knowledge_search", "args": {"query": "owls"}},
        {"id": "call_2", "name": "knowledge_search", "args": {"query": "herons"}},
    ]
    # The thread page lists the calls beside the answer, as it does for an import.
    page = logged_in(thread.owner).get(f"/threads/{thread.id}/").content.decode()
    assert page.count("data-tool-call=") == 2
    assert "herons" in page


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ({"metadata": {"note": "kept?"}}, "unknown key 'metadata'"),
        (
            {"additional_kwargs": {}, "response_metadata": {"x": 1}},
            "unknown keys 'additional_kwargs', 'response_metadata'",
        ),
        ({"tool_call": {"id": "c"}}, "unknown key 'tool_call'"),
    ],
    ids=["one", "two", "a misspelt tool_calls"],
)
def test_unknown_keys_are_refused_naming_them_and_nothing_is_written(
    api_client: Client, thread: Thread, extra: dict[str, Any], named: str
) -> None:
    before = rows()
    response = post(api_client, thread, {"type": "ai", "content": "An answer.", **extra})
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "invalid_request"
    assert named in body["detail"]
    assert (
        "a message takes only type, content, name, tool_call_id, artifact, status, tool_calls, parts"
        in body["detail"]
    )
    assert rows() == before
    thread.refresh_from_db()
    assert thread.message_count == 0


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (
            {"type": "human", "content": "q", "tool_calls": [LANGCHAIN_CALL]},
            "only an ai message carries tool calls",
        ),
        (
            {"type": "ai", "content": "a", "parts": [{"type": "video"}]},
            "part 1 must be an object whose 'type'",
        ),
        (
            {"type": "ai", "content": "a", "parts": [{"type": "thinking"}]},
            "part 1 (thinking) must hold exactly",
        ),
        (
            {"type": "ai", "content": "a", "tool_calls": [{"id": 7, "name": "f", "args": {}}]},
            "tool call 1: 'id' must be a string",
        ),
    ],
    ids=["calls on a question", "unknown part type", "part missing its text", "call id not a string"],
)
def test_bad_tool_calls_or_parts_are_refused_as_an_import_refuses_them_and_nothing_is_written(
    api_client: Client, thread: Thread, message: dict[str, Any], reason: str
) -> None:
    before = rows()
    response = post(api_client, thread, message)
    assert response.status_code == 422, response.content
    assert reason in response.json()["detail"]
    assert rows() == before
