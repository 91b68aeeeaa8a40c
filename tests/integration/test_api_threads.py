"""The threads API: create, list, get, append, import, export, and every bad input answering a clear 4xx."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from knowledgeweb.knowledge import RetrievalHit, RetrievalResult, format_result
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services.messages import MAX_PROSE_CHARS

pytestmark = pytest.mark.django_db


def post(client: Client, path: str, body: Any) -> Any:
    return client.post(path, json.dumps(body), content_type="application/json")


def test_it_creates_lists_and_gets_threads(api_client: Client) -> None:
    created = post(api_client, "/api/threads", {"title": "First", "agent_name": "bot"})
    assert created.status_code == 201
    body = created.json()
    assert (body["title"], body["agent_name"], body["message_count"]) == ("First", "bot", 0)
    assert [t["id"] for t in api_client.get("/api/threads").json()] == [body["id"]]
    detail = api_client.get(f"/api/threads/{body['id']}").json()
    assert (detail["id"], detail["messages"]) == (body["id"], [])


def test_it_appends_messages_in_order_and_returns_them(api_client: Client, thread: Thread) -> None:
    first = post(api_client, f"/api/threads/{thread.id}/messages", {"type": "human", "content": "q"})
    second = post(
        api_client,
        f"/api/threads/{thread.id}/messages",
        {"type": "ai", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    )
    assert (first.status_code, second.status_code) == (201, 201)
    assert (first.json()["seq"], second.json()["seq"], second.json()["content"]) == (1, 2, "ab")
    detail = api_client.get(f"/api/threads/{thread.id}").json()
    assert [(m["seq"], m["type"], m["content"]) for m in detail["messages"]] == [
        (1, "human", "q"),
        (2, "ai", "ab"),
    ]
    assert detail["message_count"] == 2


def test_appended_artifacts_lose_all_reserved_keys_and_keep_the_others(
    api_client: Client, thread: Thread
) -> None:
    content, artifact = format_result(
        RetrievalResult(provider="local", query="q", hits=(RetrievalHit(text="t", title="T"),))
    )
    response = post(
        api_client,
        f"/api/threads/{thread.id}/messages",
        {
            "type": "tool",
            "name": "knowledge_search",
            "content": content,
            "artifact": {**artifact, "retrieval_sources": [], "trace": {"id": 7}},
        },
    )
    assert response.status_code == 201
    assert response.json()["artifact"] == {"trace": {"id": 7}}
    assert Message.objects.get().artifact == {"trace": {"id": 7}}


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"type": "robot", "content": "x"}, "body.type: Input should be 'human', 'ai', 'tool' or 'system'"),
        ({"type": "ai"}, "body.content: Field required"),
        ({"type": "ai", "content": None}, "body.content: Value error, 'content' must be a string or a list"),
        (
            {"type": "ai", "content": [{"type": "image_url", "image_url": "u"}]},
            "body.content: Value error, content part 1 is 'image_url'; only text parts are accepted.",
        ),
        (
            {"type": "tool", "content": "x", "artifact": [1, 2]},
            "body.artifact: Input should be a valid dictionary",
        ),
        (
            {"type": "ai", "content": "x", "status": "done"},
            "body.status: Input should be 'success' or 'error'",
        ),
    ],
)
def test_an_invalid_message_answers_422_and_writes_nothing(
    api_client: Client, thread: Thread, body: dict[str, Any], detail: str
) -> None:
    response = post(api_client, f"/api/threads/{thread.id}/messages", body)
    assert response.status_code == 422
    assert detail in response.json()["detail"]
    assert Message.objects.count() == 0


@pytest.mark.parametrize("kind", ["ai", "human", "system"])
def test_prose_over_the_length_limit_answers_422_and_writes_nothing(
    api_client: Client, thread: Thread, kind: str
) -> None:
    # Markdown that costs seconds to parse would otherwise be paid on every report and export.
    too_long = "[" * (MAX_PROSE_CHARS + 1)
    response = post(api_client, f"/api/threads/{thread.id}/messages", {"type": kind, "content": too_long})
    assert response.status_code == 422
    assert response.json()["detail"] == (
        f"content of a {kind} message is {MAX_PROSE_CHARS + 1} characters; the limit is {MAX_PROSE_CHARS}."
    )
    imported = post(
        api_client, "/api/threads/import", {"title": "t", "messages": [{"type": kind, "content": too_long}]}
    )
    assert imported.status_code == 422
    assert "message 1: content of a" in imported.json()["detail"]
    assert (Thread.objects.count(), Message.objects.count()) == (1, 0)


def test_prose_at_the_limit_and_longer_tool_output_are_stored(api_client: Client, thread: Thread) -> None:
    for body in (
        {"type": "ai", "content": "a" * MAX_PROSE_CHARS},
        {"type": "tool", "content": "t" * 500_000},
    ):
        assert post(api_client, f"/api/threads/{thread.id}/messages", body).status_code == 201
    assert Message.objects.count() == 2


@pytest.mark.parametrize("path", ["/messages", "/import"])
def test_a_body_that_is_not_json_answers_400_and_writes_nothing(
    api_client: Client, thread: Thread, path: str
) -> None:
    url = f"/api/threads/{thread.id}/messages" if path == "/messages" else "/api/threads/import"
    response = api_client.post(url, "{type: ai", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["detail"] == (
        "The request body is not valid JSON: Expecting property name enclosed in double quotes."
    )
    assert (Thread.objects.count(), Message.objects.count()) == (1, 0)


def test_a_body_that_is_not_utf8_answers_400(api_client: Client, thread: Thread) -> None:
    response = api_client.post(
        f"/api/threads/{thread.id}/messages", b"\xff\xfe\xfa", content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith("The request body is not valid JSON")


def test_a_body_over_two_mebibytes_answers_413_and_writes_nothing(api_client: Client, thread: Thread) -> None:
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE == 2 * 1024 * 1024
    body = {"type": "human", "content": "x" * settings.DATA_UPLOAD_MAX_MEMORY_SIZE}
    response = post(api_client, f"/api/threads/{thread.id}/messages", body)
    assert response.status_code == 413
    assert response.json() == {
        "detail": "The request body is larger than the API's limit of 2097152 bytes.",
        "code": "body_too_large",
    }
    assert Message.objects.count() == 0


def test_a_body_just_under_the_limit_is_accepted(api_client: Client, thread: Thread) -> None:
    body = {"type": "tool", "content": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE - 100)}
    assert post(api_client, f"/api/threads/{thread.id}/messages", body).status_code == 201


@pytest.mark.parametrize(
    ("body", "detail", "import_detail"),
    [
        ({"title": "", "messages": []}, "body.title: String should have at least 1 character", None),
        ({"title": "x" * 201, "messages": []}, "body.title: String should have at most 200 characters", None),
        ({"messages": []}, "body.title: Field required", "the import holds no messages"),
        (
            "A title",
            "body: Input should be a valid dictionary",
            "the body is a string, which is not a thread",
        ),
        (
            ["A title"],
            "body: Input should be a valid dictionary",
            "message 1: a message must be a JSON object, not a string.",
        ),
    ],
)
def test_invalid_thread_fields_answer_422_and_write_nothing(
    api_client: Client, body: Any, detail: str, import_detail: str | None
) -> None:
    for path in ("/api/threads", "/api/threads/import"):
        response = post(api_client, path, body)
        assert response.status_code == 422
        expected = import_detail if path.endswith("import") and import_detail else detail
        assert expected in response.json()["detail"]
    assert Thread.objects.count() == 0


def test_it_imports_every_message_shape(api_client: Client) -> None:
    body = {
        "title": "Imported",
        "agent_name": "graph",
        "messages": [
            {"type": "human", "content": "q"},
            {"type": "ai", "data": {"content": [{"type": "text", "text": "a"}]}},
            {
                "lc": 1,
                "type": "constructor",
                "id": ["x", "ToolMessage"],
                "kwargs": {"content": "t", "tool_call_id": "1"},
            },
        ],
    }
    response = post(api_client, "/api/threads/import", body)
    assert response.status_code == 201
    assert (response.json()["title"], response.json()["message_count"]) == ("Imported", 3)
    detail = api_client.get(f"/api/threads/{response.json()['id']}").json()
    assert [(m["type"], m["content"]) for m in detail["messages"]] == [
        ("human", "q"),
        ("ai", "a"),
        ("tool", "t"),
    ]


@pytest.mark.parametrize(
    ("bad", "detail"),
    [
        ({"type": "robot", "content": "x"}, "message 57: unknown message type 'robot'"),
        ({"type": "ai"}, "message 57: 'content' is required"),
        (
            {"type": "ai", "content": [{"type": "text"}]},
            "message 57: content part 1 ('text'): a text part needs a string 'text'",
        ),
        ("just a string", "message 57: a message must be a JSON object, not a string"),
    ],
)
def test_an_import_of_100_messages_with_message_57_invalid_names_it_and_writes_nothing(
    api_client: Client, bad: Any, detail: str
) -> None:
    messages: list[Any] = [{"type": "human", "content": f"m{i}"} for i in range(1, 101)]
    messages[56] = bad
    response = post(api_client, "/api/threads/import", {"title": "Big", "messages": messages})
    assert response.status_code == 422
    assert response.json()["detail"].startswith(detail)
    assert (Thread.objects.count(), Message.objects.count()) == (0, 0)


def test_an_import_over_the_size_limit_answers_413_and_writes_nothing(api_client: Client) -> None:
    messages = [{"type": "human", "content": "x" * 1024}] * 2100
    response = post(api_client, "/api/threads/import", {"title": "Huge", "messages": messages})
    assert response.status_code == 413
    assert response.json() == {
        "detail": "The request body is larger than the API's limit of 2097152 bytes.",
        "code": "body_too_large",
    }
    assert (Thread.objects.count(), Message.objects.count()) == (0, 0)


def test_an_import_strips_reserved_keys_beside_other_keys(api_client: Client) -> None:
    artifact = {
        "knowledge_sources": [],
        "knowledge_sources_version": 1,
        "retrieval_sources": [],
        "keep": True,
    }
    body = {"title": "t", "messages": [{"type": "tool", "content": "c", "artifact": artifact}]}
    thread_id = post(api_client, "/api/threads/import", body).json()["id"]
    assert api_client.get(f"/api/threads/{thread_id}").json()["messages"][0]["artifact"] == {"keep": True}


def test_an_imported_forged_envelope_is_stored_stripped_and_its_citation_reports_unresolved(
    api_client: Client,
) -> None:
    content, artifact = format_result(
        RetrievalResult(
            provider="local", query="q", hits=(RetrievalHit(text="Forged text.", title="Forged"),)
        )
    )
    href = f"#knowledge-source-{artifact['knowledge_sources'][0]['id']}"
    messages = [
        {"type": "tool", "name": "knowledge_search", "content": content, "artifact": {**artifact, "run": 1}},
        {"type": "ai", "content": f"Trust me [Forged]({href})."},
    ]
    response = post(api_client, "/api/threads/import", {"title": "forged", "messages": messages})
    assert response.status_code == 201
    thread_id = response.json()["id"]
    stored = api_client.get(f"/api/threads/{thread_id}").json()["messages"]
    assert stored[0]["artifact"] == {"run": 1}
    (entry,) = api_client.get(f"/api/threads/{thread_id}/citations").json()["messages"]
    assert [(c["href"], c["state"], c["source"]) for c in entry["citations"]] == [(href, "unresolved", None)]


def test_the_json_export_is_served_as_a_json_attachment(api_client: Client, thread: Thread) -> None:
    post(api_client, f"/api/threads/{thread.id}/messages", {"type": "human", "content": "q"})
    response = api_client.get(f"/api/threads/{thread.id}/export?format=json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"] == f'attachment; filename="thread-{thread.id}.json"'
    assert [m["content"] for m in json.loads(response.content)["messages"]] == ["q"]


def test_the_markdown_export_is_served_as_markdown(api_client: Client, thread: Thread) -> None:
    response = api_client.get(f"/api/threads/{thread.id}/export?format=markdown")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response.content.decode().startswith("# A thread\n")


def test_an_unknown_export_format_answers_422(api_client: Client, thread: Thread) -> None:
    response = api_client.get(f"/api/threads/{thread.id}/export?format=xml")
    assert response.status_code == 422
    assert "query.format: Input should be 'json' or 'markdown'" in response.json()["detail"]


def test_the_openapi_docs_are_served(client: Client) -> None:
    assert client.get("/api/docs").status_code == 200
    schema = client.get("/api/openapi.json").json()
    assert {"/api/threads", "/api/threads/import", "/api/threads/{thread_id}/citations"} <= set(
        schema["paths"]
    )
    assert "BearerTokenAuth" in schema["components"]["securitySchemes"]


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"type": "human", "content": "a\u0000b"}, "body.content: Value error, must not contain a NUL"),
        (
            {"type": "tool", "content": "c", "name": "t\u0000"},
            "body.name: Value error, must not contain a NUL",
        ),
        (
            {"type": "tool", "content": "c", "artifact": {"k": ["\u0000"]}},
            "body.artifact.k.0: Value error, must not contain a NUL",
        ),
        (
            {"type": "tool", "content": "c", "artifact": {"k": {"\u0000": 1}}},
            'body.artifact.k."\\u0000": Value error, must not contain a NUL',
        ),
    ],
)
def test_a_nul_character_answers_422_and_writes_nothing(
    api_client: Client, thread: Thread, body: dict[str, Any], detail: str
) -> None:
    # PostgreSQL cannot store U+0000 in text or jsonb; it is refused on every database alike.
    response = post(api_client, f"/api/threads/{thread.id}/messages", body)
    assert response.status_code == 422
    assert response.json()["detail"].startswith("Invalid request: " + detail)
    assert Message.objects.count() == 0


def test_a_nul_character_in_an_import_names_the_message_and_writes_nothing(api_client: Client) -> None:
    messages = [{"type": "human", "content": "ok"}, {"type": "ai", "content": "bad\u0000"}]
    response = post(api_client, "/api/threads/import", {"title": "t", "messages": messages})
    assert response.status_code == 422
    assert (
        response.json()["detail"]
        == "message 2: content contains a NUL character (U+0000), which cannot be stored."
    )
    response = post(api_client, "/api/threads/import", {"title": "t\u0000", "messages": []})
    assert (response.status_code, response.json()["detail"]) == (
        422,
        "Invalid request: body.title: Value error, must not contain a NUL character (U+0000), "
        "which cannot be stored",
    )
    assert (Thread.objects.count(), Message.objects.count()) == (0, 0)


@pytest.mark.parametrize(
    ("raw", "detail", "imported_detail"),
    [
        (
            '{"type": "human", "content": "clef \\ud834"}',
            "body.content: Value error, must not contain an unpaired surrogate (U+D834)",
            "content contains an unpaired surrogate (U+D834)",
        ),
        (
            '{"type": "tool", "content": "c", "artifact": {"\\udc00": 1}}',
            # pydantic reports the key itself as replacement characters; it is never echoed.
            "Value error, must not contain an unpaired surrogate (U+DC00)",
            "artifact has a key that contains an unpaired surrogate (U+DC00)",
        ),
        ('{"type": "tool", "content": "c", "artifact": {"score": NaN}}', "artifact holds NaN", None),
        (
            '{"type": "tool", "content": "c", "artifact": {"score": [-Infinity]}}',
            "artifact holds -Infinity",
            None,
        ),
        ('{"type": "tool", "content": "c", "artifact": {"score": 1e400}}', "artifact holds Infinity", None),
        (
            '{"type": "tool", "content": "c", "artifact": {"a": ' + "[" * 300 + "]" * 300 + "}}",
            "artifact is nested deeper than 100 levels.",
            None,
        ),
    ],
)
def test_text_or_numbers_no_database_stores_answer_422_and_write_nothing(
    api_client: Client, thread: Thread, raw: str, detail: str, imported_detail: str | None
) -> None:
    # Python's JSON parser accepts these; the drivers or the JSON columns would not.
    response = api_client.post(f"/api/threads/{thread.id}/messages", raw, content_type="application/json")
    assert response.status_code == 422
    assert detail in response.json()["detail"]
    imported = api_client.post(
        "/api/threads/import", f'{{"title": "t", "messages": [{raw}]}}', content_type="application/json"
    )
    assert imported.status_code == 422
    assert imported.json()["detail"].startswith(f"message 1: {imported_detail or detail}")
    assert (Thread.objects.count(), Message.objects.count()) == (1, 0)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (
            '{"type": "tool", "content": "c", "artifact": {"a": ' + "[" * 5000 + "]" * 5000 + "}}",
            "it is nested too deeply",
        ),
        (
            '{"type": "tool", "content": "c", "artifact": {"a": ' + "9" * 5000 + "}}",
            "a number in it has too many digits",
        ),
    ],
)
def test_json_the_parser_gives_up_on_answers_400_with_the_reason_and_writes_nothing(
    api_client: Client, thread: Thread, raw: str, reason: str
) -> None:
    response = api_client.post(f"/api/threads/{thread.id}/messages", raw, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {
        "detail": f"The request body is not valid JSON: {reason}.",
        "code": "bad_request",
    }
    assert Message.objects.count() == 0


def test_an_artifact_nested_100_levels_deep_is_accepted(api_client: Client, thread: Thread) -> None:
    raw = '{"type": "tool", "content": "c", "artifact": {"a": ' + "[" * 99 + "]" * 99 + "}}"
    response = api_client.post(f"/api/threads/{thread.id}/messages", raw, content_type="application/json")
    assert response.status_code == 201
    assert Message.objects.get().artifact == json.loads(raw)["artifact"]
