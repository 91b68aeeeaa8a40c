"""The MCP server: retrieval and thread tools for agent hosts (``docs/decisions/0002-mcp-server.md``).

It sits beside the API at the top of the layers and shares everything that decides an
answer with it: the personal-token check, the retrieval service, the threads services
and selectors, the API's request schemas (validation), response schemas and error
handlers (so an agent over MCP and a client of ``/api/`` get the same evidence, the same
refusals and the same codes). Named ``mcp_server`` so it never shadows the SDK's ``mcp``.

| module | holds |
|---|---|
| ``identity.py`` | who calls: the token's user and the agent name |
| ``errors.py`` | a domain error as the API's JSON error body |
| ``limits.py`` | the one place tool calls and failed token checks meet the rate limits |
| ``tools.py`` | the tools: schemas and the synchronous calls into the services |
| ``server.py`` | the SDK's low-level ``Server``: tools/list and tools/call, one log line per call |
| ``http.py`` | the Streamable HTTP ASGI app and its guard (Host, Origin, token, body cap, JSON errors) |
"""
