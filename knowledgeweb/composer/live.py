"""The streamed preview: completed sentences, their citations resolved as they arrive.

The preview is not the record. The stored answer is rendered by the thread page's
own pipeline; here each completed sentence becomes plain text parts and citation
parts, which the page's script turns into text nodes and links (never HTML), so
nothing a model writes can become markup. Sources are numbered as the thread's page
numbers them: the thread's own numbers first, then in order of first citation. A citation part is ``resolved`` only
when its handle is in the evidence the answer may cite (every earlier tool message
of the thread plus this turn's); its link text is a number bound to the source.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from knowledgeweb.knowledge import Evidence, classify_href
from knowledgeweb.knowledge.numbering import number_sources

# A Markdown inline link whose destination is a fragment: the citation grammar's shape.
_LINK = re.compile(r"\[((?:[^\[\]\\\n]|\\.){0,500})\]\((#[^()\s]{0,300})\)")
# A sentence ends after . ! ? (and any closing citations) at whitespace, or at a line break.
# Never before "[": a citation may still be arriving for the sentence just ended.
_BOUNDARY = re.compile(r"(?<=[.!?])(?:\s*\[[^\[\]\n]*\]\(#[^()\s]*\))*[ \t]+(?=[^\s\[])|\n+")


class SentenceStream:
    """Feed text pieces; get back the sentences they complete, as parts."""

    def __init__(self, available: Mapping[str, Evidence], numbers: Mapping[str, int] | None = None) -> None:
        """``numbers`` are the sources the thread already cites, with the numbers its page shows;
        a source first cited in this answer takes the next one, as it will on the page."""
        self._available = available
        self._pending = ""
        self._numbers: dict[str, int] = dict(numbers or {})

    def feed(self, piece: str) -> Iterator[list[dict[str, Any]]]:
        self._pending += piece
        while True:
            match = _BOUNDARY.search(self._pending)
            # A match touching the end of the buffer may still grow (more citations, more space).
            if match is None or match.end() >= len(self._pending):
                return
            sentence, self._pending = self._pending[: match.end()], self._pending[match.end() :]
            yield self.parts(sentence)

    def finish(self) -> Iterator[list[dict[str, Any]]]:
        if self._pending:
            sentence, self._pending = self._pending, ""
            yield self.parts(sentence)

    def parts(self, sentence: str) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        position = 0
        for match in _LINK.finditer(sentence):
            if match.start() > position:
                parts.append({"text": sentence[position : match.start()]})
            parts.append(self._citation(match.group(1), match.group(2)) or {"text": match.group(0)})
            position = match.end()
        if position < len(sentence):
            parts.append({"text": sentence[position:]})
        return parts

    def _citation(self, label: str, href: str) -> dict[str, Any] | None:
        state, handle = classify_href(href)
        if state == "other":
            return None
        if state == "malformed" or handle is None:
            return {"cite": "malformed", "label": label}
        source = self._available.get(handle)
        if source is None:
            return {"cite": "unresolved", "label": label}
        self._numbers = number_sources([handle], self._numbers)
        number = self._numbers[handle]
        return {"cite": "resolved", "handle": handle, "number": number, "title": source.title}
