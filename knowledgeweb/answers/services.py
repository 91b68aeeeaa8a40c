"""What every question shares: the tool it searches with, its length limit, the title it gives a thread.

Asking itself, with the extractive composer or an answer model, is one service:
``knowledgeweb.composer.services`` (``turn_prepare``, ``turn_events``, ``turn_ask``).
"""

from __future__ import annotations

TOOL = "knowledge_search"
MAX_QUESTION_CHARS = 2000
_MAX_TITLE = 200


def question_title(question: str) -> str:
    """A new thread's title from its first question: whitespace collapsed, cut at a word."""
    title = " ".join(question.split())
    if len(title) <= _MAX_TITLE:
        return title
    return title[: _MAX_TITLE - 1].rsplit(" ", 1)[0] + "…"
