"""No NUL and no unpaired surrogate reaches the database from any string of any surface.

A property test: the OpenAPI document the API serves is walked for every string a request
can carry (query and path parameters, body fields at any depth, object keys), and each MCP
tool's input schema likewise. Hypothesis picks a location and a text holding U+0000 or an
unpaired surrogate (JSON bodies only: a URL cannot encode one), puts it into an otherwise
valid request, and the answer must be a 4xx whose JSON carries a ``code``, with not one
row written anywhere. PostgreSQL refused a NUL in a binding name with a 500 on the API's
search and ask and on the MCP search (issue 22, defect 4); a refusal by the schema (422
``invalid_request``) is asserted, so on SQLite too the test fails without it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode
from uuid import UUID

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgeweb.accounts.tokens import token_digest
from knowledgeweb.api.main import api
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.mcp_server import tools
from knowledgeweb.mcp_server.identity import Caller
from knowledgeweb.threads.models import Thread

pytestmark = pytest.mark.django_db

Path = tuple[str | int, ...]

#: A minimal valid request per operation: the NUL or surrogate goes into one of its strings.
BASELINES: dict[tuple[str, str], dict[str, Any]] = {
    ("get", "/api/threads"): {"query": {"q": "owls"}},
    ("post", "/api/threads"): {"body": {"title": "A title"}},
    ("post", "/api/threads/import"): {
        "body": {"title": "t", "messages": [{"type": "human", "content": "hi"}]}
    },
    ("get", "/api/threads/{thread_id}"): {},
    ("delete", "/api/threads/{thread_id}"): {},
    ("post", "/api/threads/{thread_id}/messages"): {"body": {"type": "human", "content": "hi"}},
    ("get", "/api/threads/{thread_id}/citations"): {},
    ("get", "/api/threads/{thread_id}/export"): {"query": {"format": "json"}},
    ("get", "/api/threads/{thread_id}/export/markdown"): {},
    ("post", "/api/threads/{thread_id}/ask"): {"body": {"question": "owls?", "binding": "local"}},
    ("get", "/api/threads/{thread_id}/review"): {},
    ("put", "/api/threads/{thread_id}/review/citations/{message_id}/{n}"): {
        "body": {"verdict": "supports", "note": "fine"}
    },
    ("put", "/api/threads/{thread_id}/review/answers/{message_id}"): {
        "body": {"verdict": "acceptable", "note": "fine"}
    },
    ("get", "/api/review/queues"): {},
    ("post", "/api/review/queues/{queue_id}/next"): {},
    ("get", "/api/review/queues/{queue_id}/agreement"): {},
    ("post", "/api/review/queues/{queue_id}/final-verdicts"): {
        "body": {"message_id": str(UUID(int=1)), "kind": "answer", "position": 0, "verdict": "acceptable"}
    },
    ("get", "/api/review/queues/{queue_id}/export"): {"query": {"format": "jsonl"}},
    ("get", "/api/knowledge/capabilities"): {"query": {"agent_name": "agent"}},
    ("post", "/api/knowledge/search"): {
        "body": {"tool": "knowledge_search", "query": "owls", "binding": "local", "agent_name": "agent"}
    },
}

#: Operations with no string to put a bad one in: a queue's number, or nothing at all.
NO_STRINGS = {
    ("get", "/api/review/queues"),
    ("post", "/api/review/queues/{queue_id}/next"),
    ("get", "/api/review/queues/{queue_id}/agreement"),
}

#: Path parameters other than the thread: valid forms, looked up only after validation.
PATH_VALUES = {"message_id": str(UUID(int=1)), "n": "1", "queue_id": "1"}

#: A minimal valid call per MCP tool.
TOOL_BASELINES: dict[str, dict[str, Any]] = {
    "knowledge_search": {"query": "owls", "binding": "local"},
    "entity_relations_search": {"query": "owls"},
    "create_thread": {"title": "A title"},
    "append_answer": {"thread_id": "<thread>", "content": "An answer."},
    "record_question": {"thread_id": "<thread>", "content": "A question?"},
    "citation_report": {"thread_id": "<thread>"},
}


@dataclass(frozen=True)
class Location:
    """Where a bad string goes: ``part`` is query, path, body or key (a new key at ``path``)."""

    part: str
    path: Path

    def __str__(self) -> str:
        return f"{self.part}:{'.'.join(str(p) for p in self.path)}"


def openapi() -> dict[str, Any]:
    return json.loads(json.dumps(api.get_openapi_schema(path_prefix="/api/")))


def string_locations(schema: dict[str, Any], defs: dict[str, Any], *, depth: int = 0) -> Iterator[Location]:
    """Every place in a body of ``schema`` that holds a string, or takes a key, down to a depth
    (of nesting: a recursive JSON value nests forever)."""
    if depth > 5:
        return
    if "$ref" in schema:
        yield from string_locations(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, depth=depth)
        return
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []) + schema.get("allOf", []):
        yield from string_locations(branch, defs, depth=depth)
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    # An untyped schema (a JSON value: docs/decisions/0183-json-values-described-as-one-untyped-schema.md) is each kind its keywords apply to.
    if "string" in kinds or "enum" in schema or "const" in schema or "pattern" in schema:
        yield Location("body", ())
    if "object" in kinds or "properties" in schema or "propertyNames" in schema:
        yield Location("key", ())
        for name, child in schema.get("properties", {}).items():
            for found in string_locations(child, defs, depth=depth + 1):
                yield Location(found.part, (name, *found.path))
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            for found in string_locations(extra, defs, depth=depth + 1):
                yield Location(found.part, ("extra", *found.path))
    if "array" in kinds or "items" in schema:
        for found in string_locations(schema.get("items", {}), defs, depth=depth + 1):
            yield Location(found.part, (0, *found.path))


def operation_locations(document: dict[str, Any]) -> list[tuple[str, str, Location]]:
    defs = document["components"]["schemas"]
    found: set[tuple[str, str, Location]] = set()
    for route, operations in document["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                if parameter["schema"].get("type") == "string":
                    found.add((method, route, Location(parameter["in"], (parameter["name"],))))
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is not None:
                found.update((method, route, where) for where in string_locations(body["schema"], defs))
    return sorted(found, key=str)


def placed(value: Any, path: Path, bad: str, *, as_key: bool) -> Any:
    """``value`` with ``bad`` at ``path`` (containers made as needed), or as a new key there."""
    if not path:
        if as_key:
            return {**(value if isinstance(value, dict) else {}), bad: "x"}
        return bad
    head, rest = path[0], path[1:]
    if isinstance(head, int):
        items = list(value) if isinstance(value, list) and value else [{}]
        items[0] = placed(items[0], rest, bad, as_key=as_key)
        return items
    mapping = dict(value) if isinstance(value, dict) else {}
    mapping[head] = placed(mapping.get(head), rest, bad, as_key=as_key)
    return mapping


def rows() -> dict[str, int]:
    """Rows in every table, Django's own included."""
    return {model._meta.label: model._default_manager.count() for model in apps.get_models()}


# Text holding one character no database stores, anywhere in otherwise ordinary text.
_PLAIN = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=8)


def bad_text(*, surrogates: bool) -> st.SearchStrategy[str]:
    bad = st.sampled_from(["\x00", "\ud800", "\udbff", "\udc00", "\udfff"] if surrogates else ["\x00"])
    return st.tuples(_PLAIN, bad, _PLAIN).map("".join)


DOCUMENT = openapi()
LOCATIONS = operation_locations(DOCUMENT)


def test_every_operation_of_the_document_has_a_baseline_and_string_locations() -> None:
    operations = {(m, r) for r, ops in DOCUMENT["paths"].items() for m in ops}
    assert operations == set(BASELINES)
    with_strings = {(m, r) for m, r, _ in LOCATIONS}
    # Every operation takes at least one string somewhere (a path id, a query, a body), but
    # those that take only a queue's number, or nothing.
    assert with_strings == operations - NO_STRINGS
    # The walk reaches deep places: an artifact's keys and nested values, a selection's ids.
    text = {f"{m} {r} {w}" for m, r, w in LOCATIONS}
    assert "post /api/threads/{thread_id}/messages key:artifact" in text
    assert "post /api/threads/{thread_id}/messages body:artifact.extra.extra" in text
    assert "post /api/knowledge/search body:scope.datasets.0.document_ids.0" in text
    assert "post /api/threads/import body:messages.0.content.0.type" in text


@pytest.fixture
def local_binding(user: User) -> None:
    binding_create(name="local", provider="local", tools=["knowledge_search"], users=[user])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_nul_or_a_surrogate_in_any_string_of_any_operation_is_refused_and_nothing_is_written(
    api_client: Client, thread: Thread, local_binding: None, data: st.DataObject
) -> None:
    method, route, where = data.draw(st.sampled_from(LOCATIONS), label="location")
    in_json = where.part in {"body", "key"}
    bad = data.draw(bad_text(surrogates=in_json), label="text")
    baseline = copy.deepcopy(BASELINES[(method, route)])
    path_id = str(thread.id)
    path_values = dict(PATH_VALUES)
    query = dict(baseline.get("query", {}))
    body = baseline.get("body")
    if where.part == "path" and where.path[0] != "thread_id":
        path_values[str(where.path[0])] = bad
    elif where.part == "path":
        path_id = bad
    elif where.part == "query":
        query[str(where.path[0])] = bad
    else:
        body = placed(body, where.path, bad, as_key=where.part == "key")
    url = route.replace("{thread_id}", quote(path_id, safe=""))
    for name, value in path_values.items():
        url = url.replace("{" + name + "}", quote(value, safe=""))
    if query:
        url += "?" + urlencode(query)
    before = rows()

    if body is None:
        response = getattr(api_client, method)(url)
    else:
        # ASCII-escaped, as any client's JSON encoder writes an unpaired surrogate.
        response = getattr(api_client, method)(url, json.dumps(body), content_type="application/json")

    answer = response.json()
    if where.part == "path":
        assert 400 <= response.status_code < 500, (where, response.status_code, answer)
    else:
        assert (response.status_code, answer["code"]) == (422, "invalid_request"), (
            method,
            route,
            where,
            answer,
        )
        assert "\x00" not in answer["detail"]
    assert answer["code"]
    assert rows() == before


# --- MCP ---------------------------------------------------------------------------


def tool_locations() -> list[tuple[str, Location]]:
    found: list[tuple[str, Location]] = []
    for spec in tools.TOOLS:
        schema = spec.input_schema
        defs = schema.get("$defs", {})
        found.extend((spec.name, where) for where in string_locations(schema, defs))
        found.append((spec.name, Location("agent", ())))
    return sorted(set(found), key=str)


TOOL_LOCATIONS = tool_locations()


def test_every_tool_has_a_baseline() -> None:
    assert {spec.name for spec in tools.TOOLS} == set(TOOL_BASELINES)
    assert {name for name, _ in TOOL_LOCATIONS} == set(TOOL_BASELINES)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_nul_or_a_surrogate_in_any_tool_argument_is_refused_and_nothing_is_written(
    user: User, api_token: str, thread: Thread, local_binding: None, data: st.DataObject
) -> None:
    name, where = data.draw(st.sampled_from(TOOL_LOCATIONS), label="location")
    bad = data.draw(bad_text(surrogates=True), label="text")
    arguments: dict[str, Any] = {
        key: str(thread.id) if value == "<thread>" else value for key, value in TOOL_BASELINES[name].items()
    }
    agent = ""
    if where.part == "agent":
        # The agent name comes from the host (a header, clientInfo), never from the arguments.
        agent = bad
    else:
        arguments = placed(arguments, where.path, bad, as_key=where.part == "key")
    caller: Callable[[], Caller] = lambda: Caller(  # noqa: E731
        user=user, token_key=token_digest(api_token), agent_name=agent
    )
    before = rows()

    result = tools.tool_call(caller=caller, name=name, arguments=arguments)

    assert (result.status, result.structured["code"]) == (422, "invalid_request"), (name, where, result)
    assert rows() == before


# --- the reported cases, by name -----------------------------------------------------


@pytest.mark.parametrize("bad", ["local\x00", "local\ud800"])
def test_a_nul_in_a_binding_name_is_refused_on_the_search_the_ask_and_the_mcp_search(
    api_client: Client, user: User, api_token: str, thread: Thread, local_binding: None, bad: str
) -> None:
    # PostgreSQL answered these with a 500 (issue 22, defect 4).
    before = rows()
    search = api_client.post(
        "/api/knowledge/search",
        json.dumps(
            {"tool": "knowledge_search", "query": "owls", "binding": bad, "thread_id": str(thread.id)}
        ),
        content_type="application/json",
    )
    ask = api_client.post(
        f"/api/threads/{thread.id}/ask",
        json.dumps({"question": "owls?", "binding": bad}),
        content_type="application/json",
    )
    mcp = tools.tool_call(
        caller=lambda: Caller(user=user, token_key=token_digest(api_token), agent_name=""),
        name="knowledge_search",
        arguments={"query": "owls", "binding": bad},
    )

    for response in (search, ask):
        assert response.status_code == 422
        assert response.json()["code"] == "invalid_request"
        # pydantic words an unpaired surrogate as "unable to parse raw data as a unicode string".
        assert response.json()["detail"].startswith("Invalid request: body.binding: ")
    assert (mcp.status, mcp.structured["code"]) == (422, "invalid_request")
    assert mcp.structured["detail"].startswith("Invalid request: arguments.binding: ")
    assert rows() == before


def test_an_ignored_key_holding_a_nul_is_refused_too(api_client: Client, thread: Thread) -> None:
    before = rows()
    response = api_client.post(
        f"/api/threads/{thread.id}/messages",
        json.dumps({"type": "human", "content": "hi", "metadata": {"note": "a\x00"}}),
        content_type="application/json",
    )
    assert response.status_code == 422
    assert response.json()["detail"] == (
        "Invalid request: body.metadata.note: Value error, must not contain a NUL character (U+0000), "
        "which cannot be stored"
    )
    assert rows() == before


def test_a_nul_in_a_uuid_field_is_refused_without_echoing_it(api_client: Any) -> None:
    response = api_client.post(
        "/api/knowledge/search",
        json.dumps({"tool": "knowledge_search", "query": "q", "thread_id": "\x00"}),
        content_type="application/json",
    )
    answer = response.json()
    assert (response.status_code, answer["code"]) == (422, "invalid_request")
    assert "\x00" not in answer["detail"]
    assert "\\u0000" in answer["detail"]
