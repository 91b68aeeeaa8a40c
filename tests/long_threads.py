"""Long threads for the windowed page's tests (issue 25), imported in one write.

Each turn is a question, a search with one document hit, an answer citing that hit and the
thread's very first source (retrieved in the first window), and a checkpoint: four messages.
The first and the last answers also cite a source nothing retrieved, so the walk has a stop
in the first window and in the last.
"""

from __future__ import annotations

import re

from django.contrib.auth.models import User

from knowledgeweb.knowledge import RetrievalHit, RetrievalResult, format_result
from knowledgeweb.threads.interchange.imports import thread_import
from knowledgeweb.threads.models import Thread

#: A handle no search returned: a citation of it has no source (one of the walk's stops).
NOWHERE = "knowledge-source-" + "e" * 32


def long_thread(owner: User, turns: int, *, title: str = "Long") -> tuple[Thread, str]:
    """A thread of ``4 * turns`` messages, and the handle of its first source."""
    messages: list[dict[str, object]] = []
    first = ""
    for n in range(turns):
        hits = (RetrievalHit(text=f"Fact number {n} about the subject.", title=f"doc-{n}.md"),)
        content, artifact = format_result(RetrievalResult(provider="local", query=f"q{n}", hits=hits))
        match = re.search(r"\(#(knowledge-source-[a-f0-9]{32})\)", content)
        assert match is not None
        handle = match.group(1)
        first = first or handle
        answer = f"Answer {n} per [doc {n}](#{handle}) and [doc 0](#{first})."
        if n in (0, turns - 1):
            answer += f" Also [nowhere](#{NOWHERE})."
        messages += [
            {"type": "human", "content": f"Question {n}?"},
            {"type": "tool", "name": "knowledge_search", "content": content, "artifact": artifact},
            {"type": "ai", "content": answer},
            {"type": "system", "content": f"Checkpoint {n}."},
        ]
    return thread_import(owner=owner, title=title, messages=messages, trusted=True), first
