"""Split text into chunks on paragraph boundaries, each at most ``limit`` characters.

Paragraphs (separated by blank lines) are packed together while they fit. A
paragraph longer than the limit is split between sentences, a sentence longer
than the limit between words, and a word longer than the limit is cut.
"""

from __future__ import annotations

import re

#: The default excerpt limit of ``format_result``: a chunk is displayed whole.
CHUNK_LIMIT = 800

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\f\v]*\n\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def paragraphs(text: str) -> list[str]:
    """The non-blank paragraphs of ``text``, trailing spaces removed from each line."""
    normalized = text.replace("\r\n", "\n").replace("\r", "\n")
    found = []
    for block in _PARAGRAPH_BREAK.split(normalized):
        paragraph = "\n".join(line.rstrip() for line in block.strip().split("\n"))
        if paragraph:
            found.append(paragraph)
    return found


def chunk_text(text: str, *, limit: int = CHUNK_LIMIT) -> list[str]:
    """``text`` in order, as chunks of at most ``limit`` characters."""
    if limit < 1:
        raise ValueError("limit must be positive")
    pieces: list[str] = []
    for paragraph in paragraphs(text):
        pieces.extend(_fit(paragraph, limit))
    return _pack(pieces, limit, "\n\n")


def _fit(paragraph: str, limit: int) -> list[str]:
    if len(paragraph) <= limit:
        return [paragraph]
    sentences: list[str] = []
    for sentence in _SENTENCE_END.split(paragraph):
        if len(sentence) <= limit:
            sentences.append(sentence)
            continue
        words: list[str] = []
        for word in sentence.split():
            words.extend(word[start : start + limit] for start in range(0, len(word), limit))
        sentences.extend(_pack(words, limit, " "))
    return _pack(sentences, limit, " ")


def _pack(pieces: list[str], limit: int, separator: str) -> list[str]:
    packed: list[str] = []
    current = ""
    for piece in pieces:
        candidate = f"{current}{separator}{piece}" if current else piece
        if len(candidate) <= limit:
            current = candidate
        else:
            packed.append(current)
            current = piece
    if current:
        packed.append(current)
    return packed
