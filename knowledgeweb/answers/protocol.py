"""The one interface an answer composer implements."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class AnswerComposer(Protocol):
    """Writes an assistant answer (Markdown) from a question and one tool message.

    The answer may cite only evidence that ``read_sources`` accepts from that
    tool message, so every citation it writes resolves in the viewer.
    """

    #: A short name telling composers apart (e.g. "extractive"). Not written into threads:
    #: a thread's agent name takes part in binding authorization.
    name: str

    def compose(self, *, question: str, tool_name: str, content: str, artifact: object) -> str:
        """The answer's Markdown. Never raises for any tool message."""
        ...
