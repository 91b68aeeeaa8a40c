"""Where MCP traffic meets the rate limits: the API's own limiter, one call per kind.

``tool_call_check`` runs before every tool call on both transports (``tools.tool_call``)
and counts searches and writes against the token exactly as ``POST /api/knowledge/search``
and the API's writes do, so a token shares one budget between the API and MCP. On the HTTP
transport each refused token is counted per address (``failed_token_check``), as the API's
bearer check does; a token that matches is always accepted. A refusal is
``ratelimit.RateLimited``, which reaches the client through ``errors.error_body`` as the
API's 429 body.
"""

from __future__ import annotations

from knowledgeweb.api.auth import TOKEN_FAILURES
from knowledgeweb.mcp_server.identity import Caller
from knowledgeweb.ops import ratelimit

#: The tools that run a retrieval, and so count against the token's search limit.
SEARCH_TOOLS = frozenset({"knowledge_search", "entity_relations_search"})
#: The tools that write to a thread, and so count against the token's write limit.
WRITE_TOOLS = frozenset({"create_thread", "append_answer"})


def tool_call_check(*, caller: Caller, tool: str) -> None:
    """Refuse the call when ``caller``'s token is over its search or write limit."""
    # The API keys the same limits by "token:" + the token's digest (api.auth.rate_limit_key).
    if tool in SEARCH_TOOLS:
        ratelimit.consume("search", "token:" + caller.token_key)
    elif tool in WRITE_TOOLS:
        ratelimit.consume("write", "token:" + caller.token_key)


def failed_token_check(*, client_address: str) -> None:
    """Count a refused token from ``client_address``; the failure that goes over the limit is
    answered 429 rather than 401, as the API answers it."""
    ratelimit.consume(TOKEN_FAILURES, client_address)
