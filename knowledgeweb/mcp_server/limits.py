"""Where MCP traffic meets the rate limits: the API's own limiter, one call per kind.

``tool_call_check`` runs before every tool call on both transports (``tools.tool_call``)
and counts searches against the token exactly as ``POST /api/knowledge/search`` does, so a
token shares one budget between the API and MCP. On the HTTP transport an address that has
used up its failed token checks is refused before the lookup (``token_check_allowed``) and
each refused token is counted (``failed_token_check``), as the API's bearer check does. A
refusal is ``ratelimit.RateLimited``, which reaches the client through ``errors.error_body``
as the API's 429 body.
"""

from __future__ import annotations

from knowledgeweb.api.auth import TOKEN_FAILURES
from knowledgeweb.mcp_server.identity import Caller
from knowledgeweb.ops import ratelimit

#: The tools that run a retrieval, and so count against the token's search limit.
SEARCH_TOOLS = frozenset({"knowledge_search", "entity_relations_search"})


def tool_call_check(*, caller: Caller, tool: str) -> None:
    """Refuse the call when ``caller``'s token is over its search limit (searches count)."""
    if tool in SEARCH_TOOLS:
        # The API keys the same limit by "token:" + the token's digest (api.auth.rate_limit_key).
        ratelimit.consume("search", "token:" + caller.token_key)


def token_check_allowed(*, client_address: str) -> None:
    """Refuse an address that has used up its failed token checks, right token or wrong."""
    ratelimit.check(TOKEN_FAILURES, client_address)


def failed_token_check(*, client_address: str) -> None:
    """Count a refused token from ``client_address``; the failure that goes over the limit is
    answered 429 rather than 401, as the API answers it."""
    ratelimit.consume(TOKEN_FAILURES, client_address)
