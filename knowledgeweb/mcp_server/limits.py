"""Where MCP traffic meets the rate limits: one call per kind, each in one place.

``tool_call_check`` runs before every tool call on both transports (``tools.tool_call``);
``failed_token_check`` runs after every refused token on the HTTP transport
(``http.McpGuard``). The shared, cache-backed limiter is built on another branch (issue 15
item 5); until it is merged these checks admit every call. Wiring it in means filling in
these two bodies: a refusal raised here becomes the caller's error (a domain error with
status 429 reaches the client through ``errors.error_body`` like any other refusal).
"""

from __future__ import annotations

from knowledgeweb.mcp_server.identity import Caller


def tool_call_check(*, caller: Caller, tool: str) -> None:
    """Refuse the call when ``caller``'s token is over its limit for ``tool`` (searches count)."""


def failed_token_check(*, client_address: str) -> None:
    """Count a refused token from ``client_address``; refuse when the address is over its limit."""
