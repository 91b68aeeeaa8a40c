"""The OpenAPI document the server serves says what the server accepts, in forms generators read.

Parsed from the served bytes with a hook that refuses duplicate keys: Python's JSON reader
keeps the last of two equal keys silently, so a document that Swagger UI refuses ("Parser
error: duplicated mapping key", issue 22 defect 13) passed every test that read it that way.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from knowledgeweb.bindings.choices import BindingTool
from knowledgeweb.providers.registry import provider_specs

pytestmark = pytest.mark.django_db

NO_NUL = "^[^\\x00]*$"


class DuplicateKeyError(ValueError):
    pass


def refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKeyError(f"duplicated key {key!r}")
        seen[key] = value
    return seen


def served(client: Client) -> dict[str, Any]:
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    document: dict[str, Any] = json.loads(response.content, object_pairs_hook=refuse_duplicates)
    return document


def test_the_hook_refuses_a_duplicated_key() -> None:
    # The test's own check can fail: the text ninja wrote before the fix had this shape.
    with pytest.raises(DuplicateKeyError, match="'429'"):
        json.loads('{"responses": {"429": {}, "429": {}}}', object_pairs_hook=refuse_duplicates)


def test_the_served_document_has_no_duplicated_key_and_the_ask_declares_429_once(client: Client) -> None:
    document = served(client)
    responses = document["paths"]["/api/threads/{thread_id}/ask"]["post"]["responses"]
    assert list(responses).count("429") == 1
    # The operation's own body, with the Retry-After every 429 documents.
    assert "Retry-After" in responses["429"]["headers"]
    assert responses["429"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorOut"
    }


def test_tool_is_an_enum_of_the_tools_a_binding_can_offer(client: Client) -> None:
    tool = served(client)["components"]["schemas"]["SearchIn"]["properties"]["tool"]
    assert tool["enum"] == list(BindingTool.values)


def test_mode_is_documented_per_provider(client: Client) -> None:
    mode = served(client)["components"]["schemas"]["SearchIn"]["properties"]["mode"]
    for spec in provider_specs():
        assert spec.label in mode["description"]
        if spec.modes is not None:
            for tool, modes in spec.modes.tool_modes.items():
                assert f"{tool}: {', '.join(modes)}" in mode["description"]
    assert "mode_not_supported" in mode["description"]


def request_schemas(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema a request can be held to: parameters, bodies and the components they use."""
    for route, operations in document["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                yield f"{method} {route} {parameter['name']}", parameter["schema"]
            for media, content in operation.get("requestBody", {}).get("content", {}).items():
                yield f"{method} {route} {media}", content["schema"]
    for name, schema in document["components"]["schemas"].items():
        if not name.endswith("Out"):
            yield name, schema


def walk(schema: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(schema, dict):
        yield where, schema
        for key, value in schema.items():
            if key in {"description", "title", "default", "examples", "example", "enum", "const"}:
                continue
            yield from walk(value, f"{where}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from walk(value, f"{where}/{index}")


def test_every_request_string_carries_the_no_nul_pattern(client: Client) -> None:
    missing = []
    for name, schema in request_schemas(served(client)):
        for where, node in walk(schema, name):
            kinds = node.get("type")
            is_string = kinds == "string" or (isinstance(kinds, list) and "string" in kinds)
            free = "enum" not in node and "const" not in node and node.get("format") != "uuid"
            if is_string and free and "pattern" not in node:
                missing.append(where)
    assert missing == []


def test_json_objects_name_their_keys_with_property_names_and_never_close_them(client: Client) -> None:
    document = served(client)
    text = json.dumps(document)
    # patternProperties with additionalProperties false reads as "no keys" to openapi-python-client.
    assert "patternProperties" not in text
    artifact = document["components"]["schemas"]["MessageIn"]["properties"]["artifact"]["anyOf"][0]
    assert artifact == {
        "type": "object",
        "propertyNames": {"pattern": NO_NUL},
        "additionalProperties": {"$ref": "#/components/schemas/JsonValue"},
    }
    closed = []
    for name, schema in request_schemas(document):
        for where, node in walk(schema, name):
            if node.get("additionalProperties") is False:
                closed.append(where)
    # One closed object, on purpose: an append refuses unknown keys (422 naming them), and its
    # named properties (no patternProperties) are read correctly by generated clients.
    assert closed == ["MessageIn"]


def test_every_reference_resolves_within_the_document(client: Client) -> None:
    document = served(client)
    refs = [node["$ref"] for _, node in walk(document, "") if isinstance(node.get("$ref"), str)]
    assert refs
    for ref in refs:
        target: Any = document
        for part in ref.removeprefix("#/").split("/"):
            assert isinstance(target, dict), ref
            assert part in target, ref
            target = target[part]
