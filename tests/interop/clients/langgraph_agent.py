"""A LangGraph agent on knowledgeweb's MCP tools, run by the interop environment's Python.

Run as ``python langgraph_agent.py <spec.json>`` with the interpreter of the cached interop
environment (``tests/interop/installation.py``): ``langchain-mcp-adapters`` 0.3.x, the 1.x MCP
SDK, langgraph and langchain-core, none of which the project's own environment can hold.

The spec names the MCP connection (``stdio``: the command, its arguments, working directory
and environment; ``streamable_http``: the URL and the bearer token) and the question. A
``create_react_agent`` with a scripted chat model asks ``knowledge_search``; the model's second
turn copies the first citation link it finds in the tool message it was given and answers with
it. What the agent wrote is printed as one JSON object on stdout, serialized each way LangChain
users serialize it: ``messages_to_dict``, ``dumpd`` and ``dumps`` of the state, ``model_dump``
of each message, the LangGraph Platform thread state, the list of state values of
``get_state_history``, and the raw MCP ``CallToolResult`` of the same search.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import uuid4

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.load import dumpd, dumps
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage, messages_to_dict
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_mcp_adapters.client import MultiServerMCPClient
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent

#: A citation link as the search's text shows it: ``[label](#knowledge-...)``.
CITATION = re.compile(r"\[[^\]\n]+\]\(#knowledge-[A-Za-z0-9_-]+\)")
SERVER = "knowledgeweb"


class ScriptedModel(BaseChatModel):
    """Asks one search, then answers citing the first link the tool message holds."""

    query: str

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        last = messages[-1]
        if not isinstance(last, ToolMessage):
            call = {
                "id": f"call_{uuid4().hex[:8]}",
                "name": "knowledge_search",
                "args": {"query": self.query},
            }
            reply = AIMessage(content="", tool_calls=[call])
        else:
            # The model reads what its tool message holds: langchain-mcp-adapters gives text blocks.
            text = last.text if hasattr(last, "text") and isinstance(last.text, str) else str(last.content)
            found = CITATION.search(text)
            if found is None:
                raise RuntimeError(f"no citation link in the tool message: {text[:500]!r}")
            reply = AIMessage(content=f"Owls hunt at night, finding mice by ear {found.group(0)}.")
        return ChatResult(generations=[ChatGeneration(message=reply)])


def _connection(spec: dict[str, Any]) -> dict[str, Any]:
    if spec["transport"] == "stdio":
        return {
            "transport": "stdio",
            "command": spec["command"],
            "args": spec["args"],
            "cwd": spec["cwd"],
            "env": spec["env"],
        }
    return {
        "transport": "streamable_http",
        "url": spec["url"],
        "headers": {"Authorization": f"Bearer {spec['token']}"},
    }


def _model_dumped(values: dict[str, Any]) -> dict[str, Any]:
    return {**values, "messages": [m.model_dump() for m in values["messages"]]}


def _platform_state(snapshot: Any) -> dict[str, Any]:
    """A LangGraph Platform ``GET /threads/{id}/state`` body (``langgraph_sdk.schema.ThreadState``)."""
    configurable = snapshot.config["configurable"]
    return {
        "values": _model_dumped(snapshot.values),
        "next": list(snapshot.next),
        "tasks": [],
        "checkpoint": {
            "thread_id": configurable["thread_id"],
            "checkpoint_ns": configurable.get("checkpoint_ns", ""),
            "checkpoint_id": configurable["checkpoint_id"],
            "checkpoint_map": None,
        },
        "metadata": snapshot.metadata,
        "created_at": snapshot.created_at,
        "parent_checkpoint": None,
        "interrupts": [],
    }


async def run(spec: dict[str, Any]) -> dict[str, Any]:
    client = MultiServerMCPClient({SERVER: _connection(spec)})
    tools = await client.get_tools()
    agent = create_react_agent(ScriptedModel(query=spec["query"]), tools, checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": str(uuid4())}}
    await agent.ainvoke({"messages": [HumanMessage(spec["question"])]}, config)
    snapshot = await agent.aget_state(config)
    history = [s.values async for s in agent.aget_state_history(config)]
    messages = snapshot.values["messages"]
    async with client.session(SERVER) as session:
        raw = await session.call_tool("knowledge_search", {"query": spec["query"]})
    return {
        "messages_to_dict": messages_to_dict(messages),
        "dumpd": dumpd(snapshot.values),
        "dumps": json.loads(dumps(snapshot.values)),
        "model_dump": [m.model_dump() for m in messages],
        "platform_state": json.loads(json.dumps(_platform_state(snapshot), default=str)),
        "history_values": json.loads(dumps(history)),
        "mcp_call_tool_result": raw.model_dump(mode="json", by_alias=True, exclude_none=True),
        "answer": messages[-1].content,
    }


def main(argv: list[str]) -> None:
    spec = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    sys.stdout.write(json.dumps(asyncio.run(run(spec))) + "\n")


if __name__ == "__main__":
    main(sys.argv)
