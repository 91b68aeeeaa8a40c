"""Tool calls and parts: the digest covers them, their stored form, and how a call reads."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from knowledgeweb.threads.calls import call_answers, describe_call
from knowledgeweb.threads.models import Message
from knowledgeweb.threads.services import message_digest

CALL = {"id": "c1", "name": "knowledge_search", "args": {"query": "q"}}


def test_the_digest_of_a_message_without_calls_or_parts_is_unchanged() -> None:
    # Messages written before tool calls existed keep their digests (and memoized validations).
    legacy = json.dumps(["text", {"a": 1}], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    expected = hashlib.sha256(legacy.encode()).hexdigest()
    assert message_digest(content="text", artifact={"a": 1}) == expected
    assert message_digest(content="text", artifact={"a": 1}, tool_calls=[], parts=[]) == expected


@pytest.mark.parametrize(
    ("tool_calls", "parts"),
    [
        ([CALL], []),
        ([{**CALL, "args": {"query": "other"}}], []),
        ([{**CALL, "name": "other"}], []),
        ([{**CALL, "id": "c2"}], []),
        ([], [{"type": "thinking", "text": "t"}]),
        ([], [{"type": "thinking", "text": "u"}]),
        ([], [{"type": "image", "media_type": "image/png", "url": ""}]),
        ([CALL], [{"type": "thinking", "text": "t"}]),
    ],
)
def test_the_digest_covers_tool_calls_and_parts(tool_calls: list[Any], parts: list[Any]) -> None:
    digests = {
        message_digest(content="x", artifact=None),
        message_digest(content="x", artifact=None, tool_calls=tool_calls, parts=parts),
    }
    assert len(digests) == 2


@pytest.mark.parametrize(
    ("call", "sentence"),
    [
        (CALL, "called knowledge_search with query 'q'"),
        ({"id": "", "name": "search", "args": {}}, "called search with no arguments"),
        ({"id": "", "name": "", "args": {"k": 5, "m": [1]}}, "called a tool with k 5, m [1]"),
        # In key order, whatever order the database kept them in.
        ({"id": "", "name": "f", "args": {"z": 1, "a": "b"}}, "called f with a 'b', z 1"),
        (
            {"id": "", "name": "f", "args": '{"broken'},
            "called f with arguments that are not JSON: '{\"broken'",
        ),
        ({"id": "", "name": "f", "args": {"q": "x" * 300}}, "called f with q '" + "x" * 199 + "…'"),
    ],
)
def test_a_call_reads_as_a_sentence(call: dict[str, Any], sentence: str) -> None:
    assert describe_call(call) == sentence


def test_each_call_is_answered_by_the_first_later_tool_message_with_its_id() -> None:
    first = Message(type="ai", tool_calls=[CALL, {**CALL, "id": "c2"}])
    unrelated = Message(type="tool", tool_call_id="c9")
    answer = Message(type="tool", tool_call_id="c1")
    again = Message(type="tool", tool_call_id="c1")
    reuse = Message(type="ai", tool_calls=[CALL])
    second_answer = Message(type="tool", tool_call_id="c1")
    answers = call_answers([first, unrelated, answer, again, reuse, second_answer])
    assert answers == {first.id: [answer, None], reuse.id: [second_answer]}


def test_every_variant_has_a_digest_of_its_own() -> None:
    variants: list[tuple[list[Any], list[Any]]] = [
        ([CALL], []),
        ([], [CALL]),
        ([{**CALL, "args": {"query": "other"}}], []),
        ([], [{"type": "thinking", "text": "t"}]),
        ([], [{"type": "refusal", "text": "t"}]),
    ]
    digests = {message_digest(content="x", artifact=None, tool_calls=c, parts=p) for c, p in variants}
    assert len(digests) == len(variants)
