"""Finding a knowledgeweb result in the wrappers real clients put around it.

A search answers ``{"content", "artifact", "status", "binding", "provider", ...}`` (the API's
body, the MCP tool's ``structuredContent``). Clients keep that body, but not where a plain
tool message keeps its evidence:

- ``langchain-mcp-adapters`` stores it one level down: ``artifact = {"structured_content": body}``;
- a LangChain ``(content, artifact)`` tool may return the whole body as its artifact;
- a tool that returns the body as its result has it as its content: JSON text, or a list of
  text blocks holding that text;
- a raw MCP transcript keeps the ``CallToolResult`` (``{"content": [...], "structuredContent":
  body}``), alone or inside its JSON-RPC response (``{"jsonrpc": "2.0", "result": ...}``), as the
  tool message's content or artifact.

A tool message found to hold a result is imported as that result: its ``content``, its
``artifact`` (where the evidence and its receipt are) and its ``status``. The wrapper is not
kept (docs/decisions/0180-a-wrapped-result-imports-as-the-result.md). Finding a result trusts nothing: the artifact then passes the same
trust boundary as any caller's artifact.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from knowledgeweb.threads.interchange.shapes.common import MessageFields

#: The keys under which clients keep an MCP result's structured content.
_STRUCTURED_KEYS = ("structured_content", "structuredContent")
#: A JSON text larger than this is not parsed in search of a result (a tool output budget is
#: 16,000 characters; a body with its artifact is a few times that).
MAX_BODY_CHARS = 1_000_000


def is_result(value: Any) -> bool:
    """Whether ``value`` is a knowledgeweb search result: text content, an object (or null)
    artifact and a status, as the API and the MCP tools answer."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("content"), str)
        and "artifact" in value
        and (value["artifact"] is None or isinstance(value["artifact"], Mapping))
        and value.get("status") in ("success", "error")
    )


def result_in(value: Any) -> Mapping[str, Any] | None:
    """The result ``value`` is or wraps (directly, under a structured-content key, in an MCP
    ``CallToolResult`` or its JSON-RPC response); None when there is none."""
    for _ in range(3):  # a JSON-RPC response around a CallToolResult around the body, at most
        if not isinstance(value, Mapping):
            return None
        if is_result(value):
            return value
        if isinstance(value.get("result"), Mapping) and "jsonrpc" in value:
            value = value["result"]
            continue
        inner = next((value[key] for key in _STRUCTURED_KEYS if isinstance(value.get(key), Mapping)), None)
        if inner is None:
            return None
        value = inner
    return value if is_result(value) else None


def _json_object(text: str) -> Any:
    stripped = text.strip()
    if not stripped.startswith("{") or len(stripped) > MAX_BODY_CHARS:
        return None
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return None


def unwrap_result(fields: MessageFields, raw_content: Any) -> MessageFields:
    """A tool message that holds a knowledgeweb result in a wrapper, as that result; any other
    message unchanged. ``raw_content`` is the message's content as written (an object, for a raw
    MCP ``CallToolResult``); ``fields.content`` is its text."""
    if fields.type != "tool":
        return fields
    found = result_in(fields.artifact)
    if found is None and isinstance(raw_content, Mapping):
        found = result_in(raw_content)
    if found is None and fields.content:
        found = result_in(_json_object(fields.content))
    if found is None:
        return fields
    return replace(
        fields,
        content=found["content"],
        artifact=None if found["artifact"] is None else dict(found["artifact"]),
        status="error" if found["status"] == "error" else fields.status,
    )


def mcp_content_text(value: Mapping[str, Any]) -> str:
    """The text blocks of an MCP ``CallToolResult`` (or its JSON-RPC response) joined, for a raw
    MCP result that holds no knowledgeweb result (an error, another server's tool)."""
    if "jsonrpc" in value and isinstance(value.get("result"), Mapping):
        value = value["result"]
    blocks = value.get("content")
    if isinstance(blocks, str):
        return blocks
    if not isinstance(blocks, list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return "".join(
        str(block["text"])
        for block in blocks
        if isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str)
    )


def is_mcp_result(value: Any) -> bool:
    """Whether an object a tool message gives as its content is an MCP ``CallToolResult`` (or
    its JSON-RPC response) or a knowledgeweb result: the only objects content may be."""
    if not isinstance(value, Mapping):
        return False
    if "jsonrpc" in value and isinstance(value.get("result"), Mapping):
        value = value["result"]
    return is_result(value) or isinstance(value.get("content"), list) or "structuredContent" in value
