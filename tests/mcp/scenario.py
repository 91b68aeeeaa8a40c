"""One agent's session, run against a server over either transport by the SDK's own client.

``api_expectations`` asks the API (in-process, before the server starts) what it answers;
``agent_session`` does the same things over MCP and records what the agent received;
``assert_session`` compares the two and checks the full loop's citation report.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from django.test import Client as DjangoClient
from mcp import Client

from knowledgeweb.knowledge.reserved import RECEIPT_KEY
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.services import thread_create
from tests.mcp.conftest import QUERY, Setup

#: The agent name the SDK's client announces by default (``clientInfo.name``).
SDK_CLIENT_NAME = "mcp"
CITATION = re.compile(r"\[citation:[^\]]*\]\(#knowledge-source-[0-9a-f]{32}\)")
INVENTED = "[citation:Owl atlas](#knowledge-source-" + "0123456789abcdef" * 2 + ")"


@dataclass
class ApiAnswers:
    search: bytes
    search_elsewhere: dict[str, Any]
    no_binding: dict[str, Any]
    others_thread_report: dict[str, Any]
    others_thread_append: dict[str, Any]
    wrong_token: dict[str, Any]
    bob_thread: Thread


def _api(token: str) -> DjangoClient:
    return DjangoClient(HTTP_AUTHORIZATION=f"Bearer {token}")


def api_expectations(setup: Setup) -> ApiAnswers:
    api = _api(setup.alice_token)
    search = api.post(
        "/api/knowledge/search",
        {"tool": "knowledge_search", "query": QUERY, "agent_name": SDK_CLIENT_NAME},
        content_type="application/json",
    )
    assert search.status_code == 200, search.content
    elsewhere = api.post(
        "/api/knowledge/search",
        {"tool": "knowledge_search", "query": "herons", "agent_name": SDK_CLIENT_NAME},
        content_type="application/json",
    )
    no_binding = api.post(
        "/api/knowledge/search",
        {"tool": "entity_relations_search", "query": QUERY, "agent_name": SDK_CLIENT_NAME},
        content_type="application/json",
    )
    assert no_binding.status_code == 403
    bob_thread = thread_create(owner=setup.bob, title="Bob's notes")
    report = api.get(f"/api/threads/{bob_thread.id}/citations")
    append = api.post(
        f"/api/threads/{bob_thread.id}/messages", {"type": "ai", "content": "Mine now."}, "application/json"
    )
    wrong = _api("kwt_not-a-token").get("/api/threads")
    assert (report.status_code, append.status_code, wrong.status_code) == (404, 404, 401)
    return ApiAnswers(
        search=search.content,
        search_elsewhere=elsewhere.json(),
        no_binding={**no_binding.json(), "status": 403},
        others_thread_report={**report.json(), "code": "not_found", "status": 404},
        others_thread_append={**append.json(), "code": "not_found", "status": 404},
        wrong_token=wrong.json(),
        bob_thread=bob_thread,
    )


@dataclass
class Received:
    """What the agent got, call by call."""

    tools: list[str] = field(default_factory=list)
    search: Any = None
    no_binding: Any = None
    others_thread_report: Any = None
    others_thread_append: Any = None
    thread: dict[str, Any] = field(default_factory=dict)
    recorded_search: Any = None
    answer: Any = None
    answer_text: str = ""
    genuine: list[str] = field(default_factory=list)
    report: Any = None


async def agent_session(client: Client, expected: ApiAnswers) -> Received:
    got = Received()
    got.tools = sorted(tool.name for tool in (await client.list_tools()).tools)
    got.search = await client.call_tool("knowledge_search", {"query": QUERY})
    got.no_binding = await client.call_tool("entity_relations_search", {"query": QUERY})
    bob_thread = str(expected.bob_thread.id)
    got.others_thread_report = await client.call_tool("citation_report", {"thread_id": bob_thread})
    got.others_thread_append = await client.call_tool(
        "append_answer", {"thread_id": bob_thread, "content": "Mine now."}
    )

    # The full loop: a thread, a search recorded in it, an answer citing it, the report.
    created = await client.call_tool("create_thread", {"title": "Owls, via MCP"})
    assert not created.is_error, created
    got.thread = created.structured_content
    got.recorded_search = await client.call_tool(
        "knowledge_search", {"query": QUERY, "thread_id": got.thread["id"]}
    )
    got.genuine = CITATION.findall(got.recorded_search.content[0].text)
    # A real source of this index that was never retrieved in the thread, and an invented one.
    unretrieved = CITATION.findall(expected.search_elsewhere["content"])[0]
    got.answer_text = (
        "Owls hunt at night "
        + " ".join(got.genuine)
        + f". Herons fish {unretrieved}; atlases agree {INVENTED}."
    )
    got.answer = await client.call_tool(
        "append_answer", {"thread_id": got.thread["id"], "content": got.answer_text}
    )
    got.report = await client.call_tool("citation_report", {"thread_id": got.thread["id"]})
    return got


def without_receipt(body: dict[str, Any]) -> dict[str, Any]:
    """A search's API body without its artifact's receipt (signed anew by every search)."""
    artifact = {k: v for k, v in body["artifact"].items() if k != RECEIPT_KEY}
    return {**body, "artifact": artifact}


def assert_session(got: Received, expected: ApiAnswers) -> None:
    assert got.tools == [
        "append_answer",
        "citation_report",
        "create_thread",
        "entity_relations_search",
        "knowledge_search",
        "record_question",
    ]
    # The evidence is the API's, byte for byte: the text the model reads is its content,
    # the structured result its whole JSON body.
    api_search = json.loads(expected.search)
    assert not got.search.is_error
    assert got.search.content[0].text == api_search["content"]
    # Byte for byte but the receipt, which each search signs at its own time.
    assert json.dumps(without_receipt(got.search.structured_content)).encode("utf-8") == json.dumps(
        without_receipt(api_search)
    ).encode("utf-8")
    assert list(json.loads(expected.search)) == list(got.search.structured_content)
    assert got.search.structured_content["artifact"]["knowledge_sources"]

    # Refusals: MCP tool errors carrying the API's body, status and code.
    for result, api_body in (
        (got.no_binding, expected.no_binding),
        (got.others_thread_report, expected.others_thread_report),
        (got.others_thread_append, expected.others_thread_append),
    ):
        assert result.is_error
        assert result.structured_content == api_body
        assert json.loads(result.content[0].text) == api_body
    assert got.no_binding.structured_content["code"] == "binding_unavailable"
    assert got.others_thread_append.structured_content["detail"] == "Thread not found."

    # The loop: the recorded search holds the same evidence as the unrecorded one.
    assert got.recorded_search.structured_content["message_id"]
    recorded = got.recorded_search.structured_content
    assert without_receipt(recorded)["artifact"] == without_receipt(api_search)["artifact"]
    assert isinstance(recorded["artifact"][RECEIPT_KEY], str)
    assert len(got.genuine) == 2
    assert got.answer.structured_content["type"] == "ai"
    assert got.answer.structured_content["content"] == got.answer_text
    [entry] = got.report.structured_content["messages"]
    assert entry["message_id"] == got.answer.structured_content["id"]
    states = [(c["label"], c["state"]) for c in entry["citations"]]
    genuine_labels = [link[1 : link.index("]")] for link in got.genuine]
    assert sorted(genuine_labels) == ["citation:Field notes", "citation:Raptors"]
    assert states == [
        *((label, "resolved") for label in genuine_labels),
        ("citation:Herons", "unresolved"),
        ("citation:Owl atlas", "unresolved"),
    ], states
    resolved = {c["source"]["title"]: c["source"]["excerpt"] for c in entry["citations"] if c["source"]}
    assert set(resolved) == {"Field notes", "Raptors"}
    assert all(c["source"] is None for c in entry["citations"][2:])


def assert_api_agrees(setup: Setup, got: Received, expected: ApiAnswers) -> None:
    """After the server stopped: the API reads back what the agent wrote, and reports it alike."""
    api = DjangoClient()  # a session: the test may have revoked the token meanwhile
    api.force_login(setup.alice)
    report = api.get(f"/api/threads/{got.thread['id']}/citations")
    assert report.status_code == 200
    assert report.content == json.dumps(got.report.structured_content).encode("utf-8")
    thread = Thread.objects.get(pk=got.thread["id"])
    assert (thread.owner, thread.agent_name, thread.message_count) == (setup.alice, SDK_CLIENT_NAME, 2)
    # The refused writes wrote nothing.
    assert expected.bob_thread.messages.count() == 0
    assert Thread.objects.filter(owner=setup.bob).count() == 1
