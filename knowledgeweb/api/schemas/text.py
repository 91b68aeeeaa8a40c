"""The string and JSON types every API request schema is written in.

PostgreSQL stores no U+0000 in ``text`` or ``jsonb``, and neither database driver can
encode an unpaired surrogate (a JSON ``"\\ud800"`` escape decodes to one). A value
holding either fails at the first query that names it, a lookup as much as a write (a
binding name with a NUL was a 500 on the search and the ask), so every string a request
carries, object keys included, is one of these types and is refused on its decoded
value with a 422 (``code: "invalid_request"``) before any service runs. The MCP tools
validate their arguments with the same schemas.

In the OpenAPI document each such string carries ``NO_NUL_PATTERN``; an unpaired
surrogate cannot be written as a portable pattern, so the descriptions say it. A JSON
object is described the way client generators read it: ``propertyNames`` with the
pattern and a typed ``additionalProperties`` (``patternProperties`` with
``additionalProperties: false`` reads as "no keys at all" to openapi-python-client).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema
from typing_extensions import TypeAliasType

from knowledgeweb.threads.text import text_problem

#: No U+0000 anywhere in the string (ECMA-262 and Python read it alike).
NO_NUL_PATTERN = "^[^\\x00]*$"


def storable(value: str) -> str:
    """``value`` when a database can store it; a ValueError saying why not otherwise."""
    problem = text_problem(value)
    if problem is not None:
        # text_problem reads "contains ... which cannot be stored."; pydantic adds the field.
        raise ValueError("must not contain " + problem.removeprefix("contains ").rstrip("."))
    return value


#: No U+0000, and something besides whitespace: a query or a question the services take
#: (they strip it and refuse what is left empty).
NON_BLANK_PATTERN = "^[^\\x00]*[^\\s\\x00][^\\x00]*$"

#: A string a database can store: no NUL, no unpaired surrogate.
Text = Annotated[str, AfterValidator(storable), Field(json_schema_extra={"pattern": NO_NUL_PATTERN})]
#: Text that must hold more than whitespace (the services refuse a blank one).
NonBlankText = Annotated[
    str, AfterValidator(storable), Field(json_schema_extra={"pattern": NON_BLANK_PATTERN})
]
# A key is validated like any Text, but its pattern is given once, as the object's
# propertyNames: a pattern on the key type would become patternProperties.
_Key = Annotated[str, AfterValidator(storable)]


def _object_schema(schema: dict[str, Any]) -> None:
    schema["propertyNames"] = {"pattern": NO_NUL_PATTERN}


class _WithoutUnion:
    """Describes a JSON-value union as one untyped schema. ``pattern`` applies to strings only,
    ``items`` to arrays, ``propertyNames`` and ``additionalProperties`` to objects, so the merged
    schema admits exactly what the union admitted, in the one form openapi-python-client reads:
    it drops a recursive ``anyOf``, and every request schema that refers to it (docs/decisions/0183-json-values-described-as-one-untyped-schema.md)."""

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        union = handler(core_schema)
        merged: dict[str, Any] = {"description": "Any JSON value; no string and no object key holds U+0000."}
        for branch in union.get("anyOf", []):
            for key in ("pattern", "items", "propertyNames", "additionalProperties"):
                if key in branch:
                    merged[key] = branch[key]
        return merged


#: Any JSON value whose keys and strings a database can store.
JsonValue = TypeAliasType(
    "JsonValue",
    Annotated["Text | int | float | bool | list[JsonValue] | JsonObject | None", _WithoutUnion()],
)
#: A JSON object whose keys and strings a database can store.
JsonObject = Annotated[dict[_Key, JsonValue], Field(json_schema_extra=_object_schema)]


def json_text_problem(value: Any) -> tuple[tuple[str | int, ...], str] | None:
    """Where the first string or object key of JSON ``value`` that no database stores is, and
    why ("contains ..." for a string, "has a key that contains ..." at the object holding a bad
    key); None when there is none. An explicit stack: deep values must not exhaust recursion."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem is not None:
                return path, problem
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and (problem := text_problem(key)) is not None:
                    return path, "has a key that " + problem
                stack.append((child, (*path, key)))
        elif isinstance(item, list | tuple):
            stack.extend((child, (*path, index)) for index, child in enumerate(item))
    return None


def json_path(path: tuple[str | int, ...]) -> str:
    """``content.parts[0].text`` for ``("content", "parts", 0, "text")``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


class StorableInput(BaseModel):
    """Base of request bodies and tool arguments: plain pydantic, so only a JSON object
    validates (ninja's ``Schema`` reads attributes off any object: a JSON string body
    ``"abc"`` would pass as ``{"title": "Abc"}`` via ``str.title``).

    Keys the schema does not name are allowed and ignored, but held to the same rule as
    every value: storable keys and JSON (``additionalProperties`` is ``JsonValue``), so
    nothing of a request holding a NUL is acted on, and the document says exactly that.
    """

    model_config = ConfigDict(extra="allow", json_schema_extra=_object_schema)
    __pydantic_extra__: dict[_Key, JsonValue] = Field(init=False)
