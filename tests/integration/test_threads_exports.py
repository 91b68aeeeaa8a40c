"""Exports: JSON keeps messages as stored; Markdown turns resolved citations into numbered references."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from knowledgeweb.knowledge import RagflowLocator, RetrievalHit, RetrievalResult
from knowledgeweb.threads.errors import ExportFormatError
from knowledgeweb.threads.evidence import message_sources
from knowledgeweb.threads.exports import thread_export
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.selectors import thread_messages
from knowledgeweb.threads.services import message_append, thread_import

pytestmark = pytest.mark.django_db

Append = Callable[..., Message]

EXCERPT = "Line one of the *excerpt*.\n```\ncode inside\n```"
RESULT = RetrievalResult(
    provider="local",
    query="q",
    hits=(
        RetrievalHit(
            text=EXCERPT, title="Guide", dataset_name="Handbook", url="https://example.org/guide", page=3
        ),
        RetrievalHit(text="Second source text.", title="Other"),
    ),
)
NATIVE = RetrievalResult(
    provider="ragflow",
    query="q",
    hits=(
        RetrievalHit(
            text="Native text.",
            title="manual.pdf",
            dataset_name="Manuals",
            locator=RagflowLocator(dataset_id="d", document_id="e", chunk_id="f", pages=(7, 8)),
        ),
    ),
)


@pytest.fixture
def cited_thread(thread: Thread, append_retrieval: Append) -> tuple[Thread, list[str]]:
    message_append(thread=thread, type="human", content="What does the guide say?")
    tool = append_retrieval(thread, RESULT)
    native = append_retrieval(thread, NATIVE, native_nonce="c" * 32)
    guide, other = message_sources(tool)
    (manual,) = message_sources(native)
    message_append(
        thread=thread,
        type="ai",
        content=(
            f"Per [the guide](#{guide}) and [again](#user-content-{guide}), also [other](#{other}) "
            f"and [manual p.7](#{manual}). Not [missing](#knowledge-source-{'0' * 32}), "
            f"not [broken](#knowledge-source-XYZ), and `[code](#{guide})` stays code."
        ),
    )
    return thread, [guide, other, manual]


def test_the_json_export_holds_every_message_as_stored(cited_thread: tuple[Thread, list[str]]) -> None:
    thread, _ = cited_thread
    document = json.loads(thread_export(thread=thread, format="json").content)
    stored = thread_messages(thread=thread)
    assert document["id"] == str(thread.id)
    assert document["title"] == thread.title
    assert [
        (m["seq"], m["type"], m["name"], m["content"], m["artifact"], m["digest"])
        for m in document["messages"]
    ] == [(m.seq, m.type, m.name, m.content, m.artifact, m.digest) for m in stored]


def test_the_json_export_is_an_import_body(cited_thread: tuple[Thread, list[str]], other_user: User) -> None:
    thread, _ = cited_thread
    document = json.loads(thread_export(thread=thread, format="json").content)
    copy = thread_import(
        owner=other_user,
        title=document["title"],
        agent_name=document["agent_name"],
        messages=document["messages"],
        trusted=True,
    )
    assert [(m.type, m.content, m.artifact, m.digest) for m in thread_messages(thread=copy)] == [
        (m.type, m.content, m.artifact, m.digest) for m in thread_messages(thread=thread)
    ]


def test_the_markdown_export_numbers_resolved_citations_and_lists_their_evidence(
    cited_thread: tuple[Thread, list[str]],
) -> None:
    thread, (guide, _, _) = cited_thread
    export = thread_export(thread=thread, format="markdown")
    assert export.content_type.startswith("text/markdown")
    text = export.content
    answer = text.split("## 4. AI\n\n", 1)[1].split("\n\n## References", 1)[0]
    assert answer == (
        "Per the guide [1] and again [1], also other [2] and manual p.7 [3]. Not missing, "
        f"not broken, and `[code](#{guide})` stays code."
    )
    references = text.split("## References\n\n", 1)[1]
    assert references.startswith("### [1] Guide\n\n- Provider: local\n- Dataset: Handbook\n- Page: 3\n")
    assert "- URL: <https://example.org/guide>\n" in references
    # The excerpt is fenced with a longer fence than any it holds, so it reads back exactly.
    assert f"````text\n{EXCERPT}\n````" in references
    assert "### [2] Other\n\n- Provider: local\n" in references
    assert "### [3] manual.pdf\n\n- Provider: ragflow\n- Dataset: Manuals\n- Pages: 7, 8\n" in references
    assert "```text\nNative text.\n```" in references
    assert "### [4]" not in references


def test_the_markdown_export_keeps_tool_output_verbatim_in_a_code_block(
    cited_thread: tuple[Thread, list[str]],
) -> None:
    thread, _ = cited_thread
    tool = thread_messages(thread=thread)[1]
    text = thread_export(thread=thread, format="markdown").content
    assert "## 2. Tool `knowledge_search`\n\n````text\n" + tool.content in text


def test_provider_text_cannot_inject_markdown_into_a_reference(
    thread: Thread, append_retrieval: Append
) -> None:
    hostile = RetrievalResult(
        provider="local",
        query="q",
        hits=(RetrievalHit(text="x", title="[click](javascript:alert(1))\n# Heading", dataset_name="<b>"),),
    )
    (handle,) = message_sources(append_retrieval(thread, hostile))
    message_append(thread=thread, type="ai", content=f"[see](#{handle})")
    text = thread_export(thread=thread, format="markdown").content
    assert r"### [1] \[click\]\(javascript:alert\(1\)\) \# Heading" in text
    assert r"- Dataset: \<b\>" in text


def test_an_unknown_export_format_is_refused(thread: Thread) -> None:
    with pytest.raises(ExportFormatError, match="unknown export format 'xml'"):
        thread_export(thread=thread, format="xml")
