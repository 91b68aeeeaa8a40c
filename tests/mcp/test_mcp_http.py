"""``manage.py mcp_http``: a real server on a free port, driven by the SDK's client and by raw HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.mcp_server.tools import TOOLS
from knowledgeweb.threads.models import Thread
from tests.mcp.conftest import Setup, SharedDatabase, http_server, mcp_errors, run_async
from tests.mcp.scenario import Received, agent_session, api_expectations, assert_api_agrees, assert_session

pytestmark = pytest.mark.mcp

MODERN = "2026-07-28"
#: Generous: the machine running the suite may be busy.
TIMEOUT = 60.0
TOO_LARGE = {
    "detail": "The request body is larger than the API's limit of 2097152 bytes.",
    "code": "body_too_large",
}


def _client(url: str, token: str, **headers: str) -> tuple[httpx2.AsyncClient, Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}", **headers}, timeout=TIMEOUT)
    return http, Client(streamable_http_client(url, http_client=http))


def _create_thread_request(title: str, **extra_arguments: Any) -> tuple[dict[str, str], bytes]:
    """One self-contained tools/call of the 2026-07-28 protocol: it writes a thread if admitted."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "create_thread",
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "create_thread",
            "arguments": {"title": title, **extra_arguments},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    return headers, json.dumps(body).encode("utf-8")


def test_an_agent_over_http_gets_the_apis_evidence_and_refusals_and_a_verified_loop(
    setup: Setup, shared_db: SharedDatabase, tmp_path: Path
) -> None:
    expected = api_expectations(setup)

    async def session(url: str) -> Received:
        http, client = _client(url, setup.alice_token)
        async with http, client:
            return await agent_session(client, expected)

    async def wrong_token(url: str) -> list[MCPError]:
        http, client = _client(url, "kwt_not-a-token")
        try:
            async with http, client:
                await client.list_tools()
        except BaseException as exc:  # the SDK raises inside its task groups
            return mcp_errors(exc)
        return []

    with http_server(shared_db, tmp_path / "server.log") as server:
        got = run_async(session, server.url)
        refused = run_async(wrong_token, server.url)
        raw = httpx.post(
            timeout=TIMEOUT, url=server.url, headers={"Authorization": "Bearer kwt_not-a-token"}, json={}
        )
        log = server.log_text

    assert_session(got, expected)
    assert_api_agrees(setup, got, expected)
    # A wrong token never reaches MCP: the API's 401, its body and its challenge.
    assert refused, "the SDK's client must fail with an MCP error"
    assert raw.status_code == 401
    assert raw.json() == {**expected.wrong_token, "code": "unauthenticated"}
    assert raw.headers["WWW-Authenticate"] == 'Bearer realm="knowledgeweb"'
    text = log()
    assert "mcp tool=knowledge_search" in text
    assert "mcp_http method=POST path=/mcp status=200" in text
    assert "status=401" in text
    assert setup.alice_token not in text


def test_the_http_guard_refuses_foreign_origins_hosts_tokens_and_bodies_as_json(
    setup: Setup, shared_db: SharedDatabase, tmp_path: Path
) -> None:
    KnowledgeBinding.objects.filter(name="nature").update(agent_names=["lead_agent"])
    alice = {"Authorization": f"Bearer {setup.alice_token}"}

    async def search_as(url: str, **headers: str) -> CallToolResult:
        http, client = _client(url, setup.alice_token, **headers)
        async with http, client:
            return await client.call_tool("knowledge_search", {"query": "owls"})

    responses: dict[str, httpx.Response] = {}
    with http_server(
        shared_db, tmp_path / "server.log", MCP_ALLOWED_ORIGINS="https://agent.example"
    ) as server:
        url = server.url

        def post(name: str, title: str, *, content: bytes | None = None, **headers: str) -> None:
            base, body = _create_thread_request(title)
            responses[name] = httpx.post(
                timeout=TIMEOUT, url=url, headers={**base, **alice, **headers}, content=content or body
            )

        post("foreign origin", "from a web page", Origin="http://evil.example")
        post("allowed origin", "from the agent's page", Origin="https://agent.example")
        post("no origin", "from a host")
        # DNS rebinding: the attacker's name resolves to 127.0.0.1, the Host header still says so.
        post("rebound host", "through a rebound name", Host="evil.example:8001")
        post("no token", "anonymous", Authorization="")
        post("wrong token", "forged", Authorization="Bearer kwt_not-a-token")
        text_plain: dict[str, Any] = {"Content-Type": "text/plain"}
        post("not json", "as text", **text_plain)
        _, big = _create_thread_request("too big", padding="x" * (2 * 1024 * 1024))
        post("too large", "too big", content=big)

        def chunks() -> Any:
            yield big[: len(big) // 2]
            yield big[len(big) // 2 :]

        base, _ = _create_thread_request("too big")
        responses["too large, chunked"] = httpx.post(
            timeout=TIMEOUT, url=url, headers={**base, **alice}, content=chunks()
        )
        responses["unknown path"] = httpx.get(
            timeout=TIMEOUT, url=url.replace("/mcp", "/admin/"), headers=alice
        )

        as_client = run_async(search_as, url)
        as_lead = run_async(lambda: search_as(url, **{"X-Agent-Name": "lead_agent"}))

    def outcome(name: str) -> tuple[int, Any]:
        response = responses[name]
        assert response.headers["Content-Type"].startswith("application/json"), name
        assert len(response.headers["X-Request-ID"]) == 32, name
        return response.status_code, response.json()

    assert outcome("foreign origin") == (
        403,
        {
            "detail": "Origin 'http://evil.example' may not call this server; allowed origins are set "
            "with MCP_ALLOWED_ORIGINS.",
            "code": "origin_refused",
        },
    )
    assert outcome("rebound host") == (
        400,
        {"detail": "Host 'evil.example:8001' is not in ALLOWED_HOSTS.", "code": "host_refused"},
    )
    assert outcome("no token")[0] == 401
    assert outcome("no token")[1]["code"] == "unauthenticated"
    assert outcome("wrong token") == (
        401,
        {"detail": "Invalid or revoked API token.", "code": "unauthenticated"},
    )
    assert outcome("not json") == (
        400,
        {"detail": "A POST must carry 'Content-Type: application/json'.", "code": "invalid_request"},
    )
    assert outcome("too large") == (413, TOO_LARGE)
    assert outcome("too large, chunked") == (413, TOO_LARGE)
    assert outcome("unknown path")[0] == 404
    for name in ("allowed origin", "no origin"):
        status, body = outcome(name)
        assert status == 200, body
        assert body["result"]["structuredContent"]["title"] in {"from the agent's page", "from a host"}
    # Only the admitted requests wrote anything.
    assert sorted(Thread.objects.values_list("title", flat=True)) == ["from a host", "from the agent's page"]

    # The host names its agent with X-Agent-Name; without it the client's name ("mcp") is used.
    assert as_client.is_error
    assert as_client.structured_content["code"] == "binding_unavailable"
    assert "for agent 'mcp'" in as_client.structured_content["detail"]
    assert not as_lead.is_error
    assert as_lead.structured_content["binding"] == "nature"


def test_a_session_opened_by_one_user_is_not_found_for_another(
    setup: Setup, shared_db: SharedDatabase, tmp_path: Path
) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "lead_agent", "version": "1"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream"}
    with http_server(shared_db, tmp_path / "server.log") as server:
        opened = httpx.post(
            timeout=TIMEOUT,
            url=server.url,
            json=initialize,
            headers={**headers, "Authorization": f"Bearer {setup.alice_token}"},
        )
        session = opened.headers["mcp-session-id"]
        httpx.post(
            timeout=TIMEOUT,
            url=server.url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers={**headers, "Authorization": f"Bearer {setup.alice_token}", "mcp-session-id": session},
        )
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        as_bob = httpx.post(
            timeout=TIMEOUT,
            url=server.url,
            json=listing,
            headers={**headers, "Authorization": f"Bearer {setup.bob_token}", "mcp-session-id": session},
        )
        as_alice = httpx.post(
            timeout=TIMEOUT,
            url=server.url,
            json=listing,
            headers={**headers, "Authorization": f"Bearer {setup.alice_token}", "mcp-session-id": session},
        )
    assert opened.status_code == 200
    assert as_bob.status_code == 404
    assert as_bob.json()["error"]["message"] == "Session not found"
    assert as_alice.status_code == 200
    assert len(as_alice.json()["result"]["tools"]) == len(TOOLS)


def test_a_valid_token_is_accepted_after_wrong_ones_used_up_the_addresss_failures(
    setup: Setup, shared_db: SharedDatabase, tmp_path: Path
) -> None:
    # Issue 22, defect 8: wrong tokens from an address locked every token user there out.
    statuses: list[int] = []
    with http_server(shared_db, tmp_path / "server.log", RATE_LIMIT_TOKEN_FAILURES="2/hour") as server:

        def post(token: str, title: str) -> int:
            base, body = _create_thread_request(title)
            headers = {**base, "Authorization": f"Bearer {token}"}
            return httpx.post(timeout=TIMEOUT, url=server.url, headers=headers, content=body).status_code

        statuses = [post("kwt_not-a-token", f"forged {n}") for n in range(3)]
        statuses.append(post(setup.alice_token, "from alice"))
        statuses.append(post("kwt_not-a-token", "forged again"))

    assert statuses == [401, 401, 429, 200, 429]
    assert list(Thread.objects.values_list("title", flat=True)) == ["from alice"]
