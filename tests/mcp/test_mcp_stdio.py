"""``manage.py mcp_server`` as an MCP host runs it: a subprocess on stdio, driven by the SDK's client."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import CallToolResult

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.threads.models import Message, Thread
from tests.mcp.conftest import QUERY, ROOT, Setup, SharedDatabase, run_async
from tests.mcp.scenario import Received, agent_session, api_expectations, assert_api_agrees, assert_session

pytestmark = pytest.mark.mcp


def _parameters(db: SharedDatabase, token: str, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp_server", *args],
        env=db.environment(KNOWLEDGEWEB_TOKEN=token),
        cwd=str(ROOT),
    )


def test_an_agent_on_stdio_gets_the_apis_evidence_and_refusals_and_a_verified_loop(
    setup: Setup, shared_db: SharedDatabase, tmp_path: Path
) -> None:
    expected = api_expectations(setup)
    shared_db.hand_over()
    log = tmp_path / "stderr.log"

    async def session() -> tuple[Received, CallToolResult]:
        with log.open("w", encoding="utf-8") as errlog:
            async with Client(
                stdio_client(_parameters(shared_db, setup.alice_token), errlog=errlog)
            ) as client:
                got = await agent_session(client, expected)
                # Revoked while the host keeps the server running: the next call is refused.
                await anyio.to_thread.run_sync(shared_db.revoke_tokens, setup.alice)
                revoked = await client.call_tool("create_thread", {"title": "After revocation"})
                return got, revoked

    try:
        got, revoked = run_async(session)
    finally:
        shared_db.take_back()

    assert_session(got, expected)
    assert revoked.is_error
    assert revoked.structured_content == {**expected.wrong_token, "code": "unauthenticated", "status": 401}
    assert not Thread.objects.filter(title="After revocation").exists()
    assert_api_agrees(setup, got, expected)

    # One log line per call, naming the user and the outcome, never the token or the query.
    text = log.read_text(encoding="utf-8")
    assert f"mcp tool=knowledge_search user={setup.alice.pk} agent='mcp' status=200" in text
    assert "mcp tool=entity_relations_search" in text
    assert "code=binding_unavailable" in text
    assert setup.alice_token not in text
    assert QUERY not in text


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("", "KNOWLEDGEWEB_TOKEN is not set"),
        ("kwt_not-a-token", "KNOWLEDGEWEB_TOKEN: Invalid or revoked API token."),
    ],
)
def test_the_stdio_server_refuses_to_start_without_a_valid_token(
    setup: Setup, shared_db: SharedDatabase, token: str, message: str
) -> None:
    shared_db.hand_over()
    try:
        done = subprocess.run(
            [sys.executable, "manage.py", "mcp_server"],
            cwd=ROOT,
            env=shared_db.environment(KNOWLEDGEWEB_TOKEN=token),
            input="",
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        shared_db.take_back()
    assert done.returncode == 1
    assert message in done.stderr
    assert done.stdout == ""  # the protocol's wire stays clean
    assert Message.objects.count() == 0
    assert Thread.objects.count() == 0


def test_the_agent_name_comes_from_the_hosts_setting_before_the_clients_name(
    setup: Setup, shared_db: SharedDatabase
) -> None:
    KnowledgeBinding.objects.filter(name="nature").update(agent_names=["lead_agent"])
    shared_db.hand_over()

    async def session(*args: str) -> CallToolResult:
        async with Client(stdio_client(_parameters(shared_db, setup.alice_token, *args))) as client:
            return await client.call_tool("knowledge_search", {"query": QUERY})

    try:
        as_client = run_async(session)
        as_lead = run_async(session, "--agent-name", "lead_agent")
    finally:
        shared_db.take_back()
    assert as_client.is_error
    assert as_client.structured_content == {
        "detail": "No binding offers knowledge_search to you for agent 'mcp'.",
        "code": "binding_unavailable",
        "status": 403,
    }
    assert not as_lead.is_error
    assert as_lead.structured_content["binding"] == "nature"
