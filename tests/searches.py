"""Recording a search in a thread exactly as the retrieval service does, without a provider.

``format_result_view`` builds the content, artifact and server view from synthetic hits;
the tool message is appended as a trusted writer with that view. Tests that need real
evidence in a thread share this one helper.
"""

from __future__ import annotations

from typing import Any

from knowledgeweb.knowledge import FormattedResult, RetrievalHit, RetrievalResult, format_result_view
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import message_append


def record_search(
    thread: Thread, *hits: RetrievalHit, provider: str = "local", query: str = "q", **budget: Any
) -> tuple[Message, FormattedResult]:
    """Append the search of ``hits`` to ``thread`` as a trusted tool message with its view."""
    formatted = format_result_view(RetrievalResult(provider=provider, query=query, hits=hits), **budget)
    message = message_append(
        thread=thread,
        type="tool",
        name="knowledge_search",
        content=formatted.content,
        artifact=formatted.artifact,
        trusted=True,
        tool_view=formatted.view,
    )
    return message, formatted


def hit_handles(formatted: FormattedResult) -> list[str]:
    """The handles of the document hits a search shows, in order."""
    return [str(hit["handle"]) for hit in formatted.view["hits"] if hit.get("kind") == "document"]
