"""Round trip (property test): a thread written in any framework's shape imports as written,
and its JSON export imports back (trusted) to the same thread: every message field, digest,
citation state and tally, and the same Markdown export.

Threads are generated in the abstract (human questions with images, answers with thinking,
tool calls and genuine, forged or malformed citations, tool results with evidence, lists of
Documents or other artifacts, errors), then written in each shape family: LangChain through
the real library (``messages_to_dict``, ``dumpd``, ``model_dump``) inside each wrapper (a
bare list, a LangGraph Platform state or ``/history``, a LangServe response), and the
OpenAI and Anthropic formats after their API references.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth.models import User
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.load import dumpd
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_to_dict,
)

from knowledgeweb.knowledge import RetrievalHit, RetrievalResult, format_result
from knowledgeweb.threads.interchange.export import thread_export
from knowledgeweb.threads.interchange.imports import thread_import_body
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.selectors import thread_citations, thread_messages

pytestmark = pytest.mark.django_db

# Text a database stores (no NUL, no surrogates), with Markdown and HTML punctuation in it.
TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40)
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
PNG = "iVBORw0KGgo="


@dataclass
class Turn:
    """One message of an abstract thread."""

    type: str
    text: str = ""
    thinking: str | None = None
    image: bool = False
    calls: list[dict[str, Any]] = field(default_factory=list)
    # Tool results
    call_id: str = ""
    name: str = ""
    artifact: Any = None
    error: bool = False


@st.composite
def threads(draw: st.DrawFn) -> list[Turn]:
    turns: list[Turn] = []
    handles: list[tuple[str, str]] = []  # (label, href) of evidence retrieved so far
    if draw(st.booleans()):
        turns.append(Turn("system", draw(TEXT)))
    for round_index in range(draw(st.integers(1, 3))):
        turns.append(Turn("human", draw(TEXT), image=draw(st.booleans())))
        calls: list[dict[str, Any]] = [
            {
                "id": f"call_{round_index}_{i}",
                "name": draw(WORD),
                "args": draw(st.dictionaries(WORD, TEXT, max_size=2)),
            }
            for i in range(draw(st.integers(0, 2)))
        ]
        thinking = draw(st.none() | TEXT)
        turns.append(Turn("ai", draw(TEXT), thinking=thinking, calls=calls))
        for call in calls:
            excerpt, title = draw(TEXT.filter(str.strip)), draw(WORD)
            kind = draw(st.sampled_from(["evidence", "documents", "object", "none"]))
            content: str = call["name"]
            artifact: Any = None
            if kind == "evidence":
                content, artifact = format_result(
                    RetrievalResult(
                        provider="local", query="q", hits=(RetrievalHit(text=excerpt, title=title),)
                    )
                )
                handles.append((title, f"#knowledge-source-{artifact['knowledge_sources'][0]['id']}"))
            elif kind == "documents":
                artifact = [{"page_content": excerpt, "metadata": {"title": title}, "type": "Document"}]
            elif kind == "object":
                artifact = {"run": draw(WORD)}
            turns.append(
                Turn(
                    "tool",
                    content,
                    call_id=call["id"],
                    name=call["name"],
                    artifact=artifact,
                    error=draw(st.booleans()),
                )
            )
        cites = (
            [f"[{label}]({href})" for label, href in draw(st.lists(st.sampled_from(handles), max_size=2))]
            if handles
            else []
        )
        forged = "[forged](#knowledge-source-" + "0" * 32 + ")"
        malformed = "[bad](#knowledge-source-XYZ)"
        extra = draw(st.lists(st.sampled_from([forged, malformed]), max_size=2))
        turns.append(Turn("ai", " ".join([draw(TEXT), *cites, *extra]), thinking=draw(st.none() | TEXT)))
    return turns


# --- Writing an abstract thread in each family ----------------------------------------------------


def langchain_objects(turns: list[Turn]) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for turn in turns:
        if turn.type == "system":
            out.append(SystemMessage(turn.text))
        elif turn.type == "human":
            content: list[Any] = [{"type": "text", "text": turn.text}]
            if turn.image:
                content.append(
                    {"type": "image", "source_type": "base64", "mime_type": "image/png", "data": PNG}
                )
            out.append(HumanMessage(content=content))
        elif turn.type == "ai":
            blocks: list[Any] = (
                [{"type": "thinking", "thinking": turn.thinking}] if turn.thinking is not None else []
            )
            out.append(
                AIMessage(content=[*blocks, {"type": "text", "text": turn.text}], tool_calls=turn.calls)
            )
        else:
            out.append(
                ToolMessage(
                    turn.text,
                    tool_call_id=turn.call_id,
                    name=turn.name,
                    artifact=turn.artifact,
                    status="error" if turn.error else "success",
                )
            )
    return out


def openai_dicts(turns: list[Turn]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for turn in turns:
        if turn.type in ("system", "human"):
            content: Any = turn.text
            if turn.image:
                url = f"data:image/png;base64,{PNG}"
                content = [
                    {"type": "text", "text": turn.text},
                    {"type": "image_url", "image_url": {"url": url}},
                ]
            out.append({"role": "developer" if turn.type == "system" else "user", "content": content})
        elif turn.type == "ai":
            message: dict[str, Any] = {"role": "assistant", "content": turn.text or None, "refusal": None}
            if turn.thinking is not None:
                message["reasoning_content"] = turn.thinking  # OpenAI-compatible servers' reasoning field
            if turn.calls:
                message["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": json.dumps(c["args"])},
                    }
                    for c in turn.calls
                ]
            out.append(message)
        else:
            out.append({"role": "tool", "tool_call_id": turn.call_id, "content": turn.text})
    return out


def anthropic_body(turns: list[Turn]) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "claude", "max_tokens": 100, "messages": []}
    for turn in turns:
        if turn.type == "system":
            body["system"] = turn.text
        elif turn.type == "human":
            image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
            blocks: list[Any] = [image] if turn.image else []
            body["messages"].append(
                {"role": "user", "content": [*blocks, {"type": "text", "text": turn.text}]}
            )
        elif turn.type == "ai":
            thinking = (
                [{"type": "thinking", "thinking": turn.thinking, "signature": "s"}]
                if turn.thinking is not None
                else []
            )
            uses = [
                {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]} for c in turn.calls
            ]
            body["messages"].append(
                {"role": "assistant", "content": [*thinking, {"type": "text", "text": turn.text}, *uses]}
            )
        else:
            result = {
                "type": "tool_result",
                "tool_use_id": turn.call_id,
                "content": turn.text,
                "is_error": turn.error,
            }
            body["messages"].append({"role": "user", "content": [result]})
    return body


def _state(messages: list[Any]) -> dict[str, Any]:
    return {
        "values": {"messages": messages},
        "next": [],
        "metadata": {},
        "created_at": "2026-12-01T00:00:00Z",
    }


FAMILIES = {
    "LangChain messages_to_dict, bare list": lambda t: messages_to_dict(langchain_objects(t)),
    "LangChain dumpd, titled body": lambda t: {
        "title": "T",
        "agent_name": "a",
        "messages": dumpd(langchain_objects(t)),
    },
    "LangGraph Platform state (model_dump)": lambda t: _state([m.model_dump() for m in langchain_objects(t)]),
    "LangGraph Platform /history": lambda t: [
        _state([m.model_dump() for m in langchain_objects(t)[:1]]) | {"created_at": "2026-11-30T00:00:00Z"},
        _state([m.model_dump() for m in langchain_objects(t)]),
    ],
    "LangServe output": lambda t: {"output": [m.model_dump() for m in langchain_objects(t)], "metadata": {}},
    "OpenAI chat messages": openai_dicts,
    "Anthropic Messages request": anthropic_body,
}


def expected_rows(turns: list[Turn], family: str) -> list[tuple[Any, ...]]:
    """What the first import must store: (type, content, name, tool_call_id, artifact, status, calls, parts)."""
    openai, anthropic = family.startswith("OpenAI"), family.startswith("Anthropic")
    rows: list[tuple[Any, ...]] = []
    if anthropic:
        turns = [t for t in turns if t.type == "system"] + [t for t in turns if t.type != "system"]
    for turn in turns:
        parts: list[dict[str, Any]] = []
        if turn.image:
            parts.append({"type": "image", "media_type": "image/png", "url": ""})
        if turn.thinking is not None and not (openai and not turn.thinking):
            parts.append({"type": "thinking", "text": turn.thinking})
        if turn.type == "tool":
            artifact = None if openai or anthropic else turn.artifact
            status = "success" if openai or not turn.error else "error"
            rows.append(("tool", turn.text, turn.name, turn.call_id, json_of(artifact), status, [], []))
        else:
            rows.append((turn.type, turn.text, "", "", None, "success", turn.calls, parts))
    return rows


def json_of(value: Any) -> Any:
    return json.loads(json.dumps(value))


# --- Comparing two threads -------------------------------------------------------------------------


def stored(thread: Thread) -> list[tuple[Any, ...]]:
    return [
        (
            m.seq,
            m.type,
            m.content,
            m.name,
            m.tool_call_id,
            m.artifact,
            m.status,
            m.tool_calls,
            m.parts,
            m.digest,
        )
        for m in thread_messages(thread=thread)
    ]


def citations(thread: Thread) -> list[tuple[Any, ...]]:
    return [
        (entry.message.seq, c.label, c.href, c.state, c.source.handle if c.source else None)
        for entry in thread_citations(thread=thread)
        for c in entry.citations
    ]


def markdown(thread: Thread) -> str:
    text = thread_export(thread=thread, format="markdown").content
    text = text.replace(str(thread.id), "<thread id>")
    text = re.sub(r"^- Created: .*$", "- Created: <time>", text, flags=re.MULTILINE)
    # Reference anchors carry a tag derived from the thread's id; the rest must be identical.
    return re.sub(r"ref-[0-9a-f]{12}-", "ref-<tag>-", text)


def json_export(thread: Thread) -> dict[str, Any]:
    document = json.loads(thread_export(thread=thread, format="json").content)
    for key in ("id", "created_at", "updated_at"):
        document.pop(key)
    for message in document["messages"]:
        message.pop("id")
        message.pop("created_at")
    return document


@pytest.mark.parametrize("family", list(FAMILIES))
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(turns=threads())
def test_a_thread_imports_as_written_and_its_export_imports_back_to_the_same_thread(
    user: User, family: str, turns: list[Turn]
) -> None:
    body = json_of(FAMILIES[family](turns))
    first = thread_import_body(owner=user, body=body, trusted=True)
    rows = [row[1:9] for row in stored(first)]
    assert rows == expected_rows(turns, family)

    exported = thread_export(thread=first, format="json").content
    second = thread_import_body(owner=user, body=json.loads(exported), trusted=True)

    assert stored(second) == stored(first)
    assert citations(second) == citations(first)
    assert markdown(second) == markdown(first)
    assert json_export(second) == json_export(first)
    assert (second.title, second.agent_name, second.message_count, second.content_bytes) == (
        first.title,
        first.agent_name,
        first.message_count,
        first.content_bytes,
    )
    Thread.objects.filter(id__in=[first.id, second.id]).delete()
    assert not Message.objects.filter(thread_id__in=[first.id, second.id]).exists()


def test_the_round_trip_covers_every_citation_state(user: User) -> None:
    # The generator reaches all three states; checked once on a fixed thread of each.
    turns = [
        Turn("human", "q"),
        Turn("ai", "", calls=[{"id": "c", "name": "knowledge_search", "args": {"query": "q"}}]),
    ]
    content, artifact = format_result(
        RetrievalResult(provider="local", query="q", hits=(RetrievalHit(text="Evidence.", title="Doc"),))
    )
    href = f"#knowledge-source-{artifact['knowledge_sources'][0]['id']}"
    turns.append(Turn("tool", content, call_id="c", name="knowledge_search", artifact=artifact))
    turns.append(Turn("ai", f"[Doc]({href}) [f](#knowledge-source-{'0' * 32}) [m](#knowledge-source-XYZ)"))
    first = thread_import_body(
        owner=user, body=json_of(messages_to_dict(langchain_objects(turns))), trusted=True
    )
    second = thread_import_body(
        owner=user, body=json.loads(thread_export(thread=first, format="json").content), trusted=True
    )
    assert [c[3] for c in citations(second)] == ["resolved", "unresolved", "malformed"]
    assert citations(second) == citations(first)
