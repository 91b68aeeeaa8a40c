"""The stdio transport: one host process, one user, the token from the environment."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from knowledgeweb.mcp_server.identity import Caller, agent_name_choose, caller_authenticate
from knowledgeweb.mcp_server.server import CallerSource, build_server, client_name


def package_version() -> str:
    try:
        return version("knowledgeweb")
    except PackageNotFoundError:
        return ""


def stdio_caller_source(*, raw_token: str, agent_name: str | None) -> CallerSource:
    """The caller of every call on this connection: the token's user, checked again at each
    call (so revoking the token takes effect at once, as for the API), and the agent."""

    def caller_source(ctx: ServerRequestContext[Any, Any]) -> Caller:
        agent = agent_name_choose(explicit=agent_name, client_name=client_name(ctx))
        return caller_authenticate(raw_token=raw_token, agent_name=agent)

    return caller_source


async def serve_stdio(*, raw_token: str, agent_name: str | None) -> None:
    """Serve MCP on stdin/stdout until the host closes stdin."""
    source = stdio_caller_source(raw_token=raw_token, agent_name=agent_name)
    server = build_server(caller_source=source, version=package_version())
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
