"""What every real-LightRAG test checks: evidence is what the server returned, and the viewer resolves it."""

from __future__ import annotations

import html
import re
from typing import Any

from django.test import Client

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.knowledge import Evidence
from knowledgeweb.knowledge.bounds import TRUNCATION_MARK
from knowledgeweb.providers.lightrag.relations import SEP
from knowledgeweb.retrieval import SearchOutcome
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import message_append
from tests.lightrag_real.servers import LightragServer
from tests.live.conftest import RecordingTransport
from tests.pages import with_hits

_SHARED_HANDLE = re.compile(r"\(#(knowledge-source-[0-9a-f]{32})\)")


def use_mode(binding: KnowledgeBinding, mode: str) -> None:
    """Make the following searches through ``binding`` ask LightRAG in ``mode``, as an admin
    would: the binding allows the mode and makes it its default. Every caller asserts the
    recorded request carried it."""
    assert binding.provider == "lightrag"
    if mode == "naive":
        # naive returns no graph, so a binding whose default it is may offer documents only.
        binding.tools = ["knowledge_search"]
    binding.query_modes = [mode]
    binding.default_mode = mode
    binding.full_clean()
    binding.save()


def recorded_data(recording: RecordingTransport) -> dict[str, Any]:
    """``data`` of the one ``/query/data`` answer the adapter received."""
    (body,) = recording.bodies("/query/data")
    assert isinstance(body, dict), body
    assert body.get("status") == "success", body
    data: dict[str, Any] = body["data"]
    return data


def recorded_request(recording: RecordingTransport) -> dict[str, Any]:
    import json

    (request,) = [r for r, _, _ in recording.exchanges if r.url.path == "/query/data"]
    sent: dict[str, Any] = json.loads(request.content)
    return sent


def without_timestamps(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` less ``created_at``, the one field LightRAG does not repeat run to run."""
    return {
        key: [{k: v for k, v in item.items() if k != "created_at"} for item in items]
        for key, items in data.items()
    }


def assert_server_repeats(server: LightragServer, sent: dict[str, Any], data: dict[str, Any]) -> None:
    """The server's own answer to the same request, asked again directly, is the same data."""
    again = server.query_data(**sent)
    assert again["status"] == "success", again
    assert without_timestamps(again["data"]) == without_timestamps(data)


def excerpt_of(evidence: Evidence) -> str:
    return evidence.excerpt.removesuffix(TRUNCATION_MARK).rstrip() if evidence.truncated else evidence.excerpt


def quoted_chunk(evidence: Evidence, chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The returned chunk this evidence quotes: same file, and the excerpt is its text (or its prefix)."""
    excerpt = excerpt_of(evidence)
    for chunk in chunks:
        text = str(chunk.get("content", "")).strip()
        quoted = text.startswith(excerpt) if evidence.truncated else text == excerpt
        if quoted and chunk.get("file_path") == evidence.title:
            return chunk
    raise AssertionError(f"{evidence.handle} ({evidence.title!r}) quotes no chunk the server returned")


def split_sep(value: str) -> list[str]:
    return [part for part in value.split(SEP) if part]


def cite_all(thread: Thread, tool_content: str) -> list[str]:
    """Append an answer citing every shared handle in ``tool_content``; return the handles."""
    handles = list(dict.fromkeys(_SHARED_HANDLE.findall(tool_content)))
    citations = " ".join(f"[{n}](#{handle})" for n, handle in enumerate(handles, start=1))
    message_append(thread=thread, type="ai", content=f"According to the sources {citations}.")
    return handles


def viewer_resolves(reader: Client, thread: Thread, sources: dict[str, Evidence]) -> str:
    """The viewer page resolves every cited source and shows its excerpt; returns the page."""
    response = reader.get(f"/threads/{thread.id}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert page.count('data-citation="resolved"') == len(sources)
    assert 'data-citation="unresolved"' not in page
    assert 'data-citation="malformed"' not in page
    # A tool message's hits load when it is expanded (the hits route): read them as the page does.
    page = with_hits(reader, page)
    for evidence in sources.values():
        assert f'data-source-id="{evidence.id}" href="#{evidence.handle}"' in page
        assert html.escape(evidence.excerpt) in page
    return page


def recorded_message(outcome: SearchOutcome) -> Message:
    """The tool message a search with a thread wrote."""
    assert outcome.message_id is not None, outcome.content
    return Message.objects.get(id=outcome.message_id)


def thread_messages(thread: Thread) -> list[tuple[str, str, str, Any]]:
    return [(m.type, m.status, m.content, m.artifact) for m in Message.objects.filter(thread=thread)]
