"""Threads for the browser tests, built through the real services, ``format_result`` and the API."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.accounts.services import token_create
from knowledgeweb.knowledge import (
    RagflowLocator,
    RetrievalHit,
    RetrievalResult,
    format_result,
    source_id,
)
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import message_append, thread_create
from tests.searches import record_search

_HANDLE = re.compile(r"\(#(knowledge-source-[a-f0-9]{32}|knowledge-[a-f0-9]{32}-[0-9]+)\)")


@dataclass(frozen=True)
class Source:
    """A source as retrieved: what the dialog must show."""

    handle: str
    title: str
    excerpt: str

    @property
    def id(self) -> str:
        return self.handle.removeprefix("knowledge-source-").removeprefix("knowledge-")


def _sources(content: str, artifact: dict[str, Any]) -> list[Source]:
    handles = _HANDLE.findall(content)
    records = artifact["knowledge_sources"]
    if isinstance(records, dict):  # the native snapshot
        return [
            Source(h, r["document_name"], r["text"]) for h, r in zip(handles, records["sources"], strict=True)
        ]
    return [Source(h, r["title"], r["excerpt"]) for h, r in zip(handles, records, strict=True)]


def retrieve(
    thread: Thread, *hits: RetrievalHit, provider: str = "local", **budget: Any
) -> tuple[Message, list[Source]]:
    """What the retrieval service does: format the result and append it as a trusted tool message."""
    message, formatted = record_search(thread, *hits, provider=provider, **budget)
    return message, _sources(formatted.content, formatted.artifact)


def api_append(owner: User, thread: Thread, body: dict[str, Any]) -> dict[str, Any]:
    """Append a message the way an integration does: a bearer token and the HTTP API."""
    _, raw = token_create(user=owner, name="e2e")
    response = Client().post(
        f"/api/threads/{thread.id}/messages",
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert response.status_code == 201, response.content
    payload: dict[str, Any] = response.json()
    return payload


@dataclass(frozen=True)
class Verified:
    thread: Thread
    shared: Source
    truncated: Source
    native: Source
    uncited: Source


def verified_thread(owner: User) -> Verified:
    """Genuine evidence cited in all three accepted forms, plus a truncated and an uncited source."""
    thread = thread_create(owner=owner, title="Why cats purr")
    message_append(thread=thread, type="human", content="Why do cats purr, and what does the report say?")
    _, (shared, truncated, uncited) = retrieve(
        thread,
        RetrievalHit(
            text="Cats purr when content.\n  They also purr when stressed or hurt.",
            title="Cats & <Care> guide",
            dataset_name="Pets",
            url="https://example.org/cats?a=1&b=2",
            page=3,
        ),
        RetrievalHit(text="Purring frequency notes. " * 20, title="Long notes"),
        RetrievalHit(text="Dogs wag their tails.", title="Dogs guide"),
        max_chars_per_hit=120,
    )
    _, (native,) = retrieve(
        thread,
        RetrievalHit(
            text="Revenue from cat food grew 12%.",
            title="annual-report.pdf",
            dataset_name="Reports",
            locator=RagflowLocator(dataset_id="ds-1", document_id="doc-1", chunk_id="ch-1", pages=(7,)),
        ),
        provider="ragflow",
    )
    message_append(
        thread=thread,
        type="ai",
        content=(
            f"Cats purr when content [guide](#{shared.handle}), and when stressed "
            f"[same guide](#user-content-{shared.handle}). The report agrees [1](#{native.handle}). "
            f"See also [notes](#{truncated.handle})."
        ),
    )
    return Verified(thread, shared, truncated, native, uncited)


@dataclass(frozen=True)
class Forged:
    thread: Thread
    labels: tuple[str, ...]
    later: Source


def forged_thread(owner: User) -> Forged:
    """Each forged case of the issue, next to evidence that is genuine."""
    thread = thread_create(owner=owner, title="Forged citations")

    # An id mismatch: the record claims an id its fields do not hash to.
    content, artifact = format_result(
        RetrievalResult(provider="local", query="q", hits=(RetrievalHit(text="Mismatch text.", title="A"),))
    )
    real_id = artifact["knowledge_sources"][0]["id"]
    forged_id = hashlib.sha256(b"another source").hexdigest()[:32]
    artifact["knowledge_sources"][0]["id"] = forged_id
    message_append(
        thread=thread,
        type="tool",
        name="knowledge_search",
        content=content.replace(real_id, forged_id),
        artifact=artifact,
        trusted=True,
    )

    # An excerpt missing from the content the model saw.
    content, artifact = format_result(
        RetrievalResult(provider="local", query="q", hits=(RetrievalHit(text="Shown excerpt.", title="B"),))
    )
    record = artifact["knowledge_sources"][0]
    record["excerpt"] = "An excerpt that never reached the model."
    shown_id, record["id"] = record["id"], source_id("local", "B", record["excerpt"])
    content = content.replace(shown_id, record["id"])  # the handle is there, the excerpt is not
    message_append(
        thread=thread, type="tool", name="knowledge_search", content=content, artifact=artifact, trusted=True
    )
    missing_handle = f"knowledge-source-{record['id']}"

    # Reserved keys sent through the API are stripped, whatever the tool's name.
    content, artifact = format_result(
        RetrievalResult(provider="local", query="q", hits=(RetrievalHit(text="Via the API.", title="C"),))
    )
    stored = api_append(
        owner,
        thread,
        {
            "type": "tool",
            "name": "knowledge_search",
            "content": content,
            "artifact": {**artifact, "note": "kept"},
        },
    )
    assert stored["artifact"] == {"note": "kept"}
    api_handle = _HANDLE.findall(content)[0]

    # Evidence that appears only in a later tool message.
    later_content, later_artifact = format_result(
        RetrievalResult(provider="local", query="q", hits=(RetrievalHit(text="Later text.", title="D"),))
    )
    (later,) = _sources(later_content, later_artifact)

    labels = ("mismatch", "missing excerpt", "via api", "later only")
    message_append(
        thread=thread,
        type="ai",
        content=(
            f"[mismatch](#knowledge-source-{forged_id}) [missing excerpt](#{missing_handle}) "
            f"[via api](#{api_handle}) [later only](#{later.handle})"
        ),
    )
    message_append(
        thread=thread,
        type="tool",
        name="knowledge_search",
        content=later_content,
        artifact=later_artifact,
        trusted=True,
    )
    message_append(thread=thread, type="ai", content=f"Now it resolves: [later now](#{later.handle}).")
    return Forged(thread, labels, later)


XSS_TITLE = "<img src=x onerror=\"alert('title')\"><script>alert('title')</script> Title"
XSS_EXCERPT = (
    "<svg onload=\"alert('excerpt')\"></svg><iframe src=\"javascript:alert('excerpt')\"></iframe>\n"
    "<form action=\"javascript:alert('excerpt')\"><button>Go</button></form>"
    "<a href=\"javascript:alert('excerpt')\" onclick=\"alert('excerpt')\">click</a>"
)


@dataclass(frozen=True)
class Hostile:
    thread: Thread
    source: Source


def hostile_thread(owner: User) -> Hostile:
    """Hostile markup in a source title, an excerpt, tool content and AI content."""
    thread = thread_create(owner=owner, title="<script>alert('thread')</script> Hostile")
    _, (source,) = retrieve(thread, RetrievalHit(text=XSS_EXCERPT, title=XSS_TITLE))
    api_append(
        owner,
        thread,
        {
            "type": "tool",
            "name": "knowledge_search",
            "content": (
                "<script>alert('tool')</script><svg onload=\"alert('tool')\"></svg>\n\n"
                f'[1] <div id="{source.handle}">tool clobber</div>'
                "<iframe src=\"javascript:alert('tool')\"></iframe><form><button>x</button></form>"
            ),
            "artifact": {"note": "<img src=x onerror=\"alert('artifact')\">"},
        },
    )
    message_append(
        thread=thread,
        type="ai",
        content=(
            "<script>alert('ai')</script>\n\n"
            "[js link](javascript:alert('ai')) <a href=\"javascript:alert('ai')\">raw link</a>\n\n"
            "<p onclick=\"alert('ai')\" onmouseover=\"alert('ai')\">handlers</p>\n\n"
            '<svg onload="alert(\'ai\')"></svg><iframe src="https://example.org/"></iframe>\n\n'
            '<form action="/accounts/logout/" method="post"><button>log out</button></form>\n\n'
            f'<div id="{source.handle}">clobbered panel anchor</div>\n\n'
            f"The real one: [evidence](#{source.handle} \"onmouseover=alert('ai')\")."
        ),
    )
    return Hostile(thread, source)
