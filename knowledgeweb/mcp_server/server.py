"""The MCP server on the SDK's low-level ``Server``: tools/list and tools/call.

The low-level server, not ``MCPServer``: the tools' schemas are the API's (not derived
from function signatures), and a refusal must come back as the API's error body with
``isError`` set, which the decorator layer would flatten into text.

A refusal is a tool result with ``isError: true`` (the MCP specification's tool execution
error, which the model sees and can act on: "name one with 'binding'"), whose
``structuredContent`` and text are the API's JSON error body plus ``status`` and ``code``.
An unknown tool is a protocol error (JSON-RPC invalid params), as the specification asks.

Every call runs in a worker thread (the ORM is synchronous) and closes its database
connection when done, and leaves one log line: tool, user, agent,
status, code and duration. Never the token, the query or the arguments.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Protocol

import anyio.to_thread
import mcp_types as types
from django.db import close_old_connections, connections
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from knowledgeweb.mcp_server.identity import Caller
from knowledgeweb.mcp_server.tools import TOOLS, TOOLS_BY_NAME, ToolResult, tool_call

logger = logging.getLogger(__name__)

SERVER_NAME = "knowledgeweb"
INSTRUCTIONS = (
    "Search with knowledge_search (documents) or entity_relations_search (knowledge graphs). "
    "To have an answer's citations find their sources: create_thread, run the searches with its thread_id, append_answer "
    "citing hits with the exact links the results gave, then citation_report shows which citations "
    "resolved. A citation of anything not retrieved in the thread never finds a source."
)


class CallerSource(Protocol):
    """Names the caller of one request; runs in the worker thread (it may query the database)."""

    def __call__(self, ctx: ServerRequestContext[Any, Any]) -> Caller: ...


def client_name(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The ``clientInfo.name`` the MCP client announced, when it announced one."""
    params = ctx.session.client_params
    return params.client_info.name if params is not None else None


def tool_definitions() -> list[types.Tool]:
    return [
        types.Tool(
            name=spec.name,
            title=spec.title,
            description=spec.description,
            input_schema=spec.input_schema,
            output_schema=spec.output_schema,
            annotations=types.ToolAnnotations(
                title=spec.title,
                read_only_hint=spec.read_only,
                destructive_hint=False,
                open_world_hint=spec.open_world,
            ),
        )
        for spec in TOOLS
    ]


def _in_worker(call: Callable[[], ToolResult]) -> ToolResult:
    close_old_connections()
    try:
        return call()
    finally:
        # Closed, not kept for CONN_MAX_AGE: the SDK's worker threads come and go (idle ones
        # exit), and a connection left in a thread that exits stays open on the server.
        connections.close_all()


def build_server(*, caller_source: CallerSource, version: str = "") -> Server[Any]:
    """The SDK server exposing the tools, naming each call's caller with ``caller_source``."""
    definitions = tool_definitions()

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=definitions)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in TOOLS_BY_NAME:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool {params.name!r}.")
        arguments: Mapping[str, Any] = params.arguments or {}
        started = time.monotonic()
        seen: list[Caller] = []

        def caller() -> Caller:
            who = caller_source(ctx)
            seen.append(who)
            return who

        call = partial(tool_call, caller=caller, name=params.name, arguments=arguments)
        result = await anyio.to_thread.run_sync(partial(_in_worker, call))
        who = seen[0] if seen else None
        logger.info(
            "mcp tool=%s user=%s agent=%r status=%d code=%s duration_ms=%.1f",
            params.name,
            who.user.pk if who else "-",
            who.agent_name if who else "",
            result.status,
            result.structured.get("code", "-") if result.is_error else "-",
            (time.monotonic() - started) * 1000,
        )
        return types.CallToolResult(
            content=[types.TextContent(text=result.text)],
            structured_content=result.structured,
            is_error=result.is_error,
        )

    return Server(
        SERVER_NAME,
        version=version,
        title="knowledgeweb",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
