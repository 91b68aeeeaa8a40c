"""A caller's message: the body of ``POST /api/threads/{id}/messages`` and of the MCP tools that
write messages (``api/messages.py`` records it)."""

from __future__ import annotations

from typing import Any, Literal

from ninja import Field
from pydantic import ConfigDict, field_validator, model_validator

from knowledgeweb.api.schemas.text import (
    NO_NUL_PATTERN,
    JsonObject,
    StorableInput,
    Text,
    json_path,
    json_text_problem,
)
from knowledgeweb.api.schemas.threads import MessageTypeName
from knowledgeweb.threads.errors import MessageInvalidError
from knowledgeweb.threads.interchange.shapes import content_text
from knowledgeweb.threads.text import MAX_JSON_DEPTH, json_depth


class TextPart(StorableInput):
    type: Literal["text"]
    text: Text


def _closed_object_schema(schema: dict[str, Any]) -> None:
    # Named properties only, no patternProperties: generated clients read this form correctly.
    schema["propertyNames"] = {"pattern": NO_NUL_PATTERN}
    schema["additionalProperties"] = False


class MessageIn(StorableInput):
    """A caller's message. Reserved evidence keys in ``artifact`` are stripped; other keys are kept.

    A key the schema does not name is refused (422 naming it): a recorded thread must not
    silently lose what its writer sent. The schema says so (``additionalProperties: false``);
    the refusal runs after the extra keys' own checks, so a NUL in one is still named as such.
    """

    model_config = ConfigDict(json_schema_extra=_closed_object_schema)

    type: MessageTypeName
    content: Text | list[Text | TextPart] = Field(
        description="A string, or a list of text parts (or strings) joined in order."
    )
    name: Text = Field(default="", max_length=128, description="The tool name, for tool messages.")
    tool_call_id: Text = Field(default="", max_length=128)
    artifact: JsonObject | None = None
    status: Literal["success", "error"] = "success"
    tool_calls: list[JsonObject] | None = Field(
        default=None,
        description="The calls an AI message made, read as an import reads them: LangChain "
        "{id, name, args} or OpenAI {id, type: function, function: {name, arguments}}.",
    )
    parts: list[JsonObject] | None = Field(
        default=None,
        description="Non-text content beside the text, in the stored form an export writes "
        "(thinking, refusal, image and file placeholders), read as an import reads it.",
    )

    @field_validator("content", mode="before")
    @classmethod
    def _join_parts(cls, value: Any) -> str:
        # Parts are joined before their schema sees them: their every key and string first.
        found = json_text_problem(value) if isinstance(value, list) else None
        if found is not None:
            path, problem = found
            raise ValueError(f"{json_path(('part', *path))} {problem}")
        try:
            return content_text(value)
        except MessageInvalidError as exc:
            raise ValueError(str(exc)) from exc

    @model_validator(mode="after")
    def _no_unknown_keys(self) -> MessageIn:
        unknown = sorted(self.model_extra or {})
        if unknown:
            names = ", ".join(repr(name) for name in unknown)
            known = ", ".join(type(self).model_fields)
            noun = "key" if len(unknown) == 1 else "keys"
            raise ValueError(f"unknown {noun} {names}; a message takes only {known}.")
        return self

    @field_validator("artifact", mode="before")
    @classmethod
    def _storable_artifact(cls, value: Any) -> Any:
        # Before the recursive JsonValue check, whose own depth limit would answer a
        # deep artifact with a page of type mismatches instead of the reason.
        if json_depth(value) > MAX_JSON_DEPTH:
            raise ValueError(f"artifact is nested deeper than {MAX_JSON_DEPTH} levels.")
        return value
