"""Markdown-aware prose, question clauses and Markdown escaping for extractive answers.

Where a sentence ends, which words are stop words and how a word is stemmed are
``knowledgeweb.knowledge.text``'s rules, shared with the citation viewer's
passages; this module adds what only the composer needs: Markdown blocks read as
prose, the words that frame a question, and quoting source text safely.
"""

from __future__ import annotations

import re

from knowledgeweb.knowledge.text import sentences as prose_sentences

# Words that frame a question rather than say what it is about: a sentence need not hold them.
_QUESTION_FRAMING_TEXT = """
tell explain describe define mean means meant say says said happen happens happened
name named called call kind kinds type types way ways whose many much give list please
know show find example examples briefly exactly difference
"""
QUESTION_FRAMING = frozenset(_QUESTION_FRAMING_TEXT.split())

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
# Block markers at the start of a line: headings, quotes, list bullets, numbered items.
_LINE_MARKER = re.compile(r"^\s{0,3}(?:#{1,6}\s+|>\s*|[-*+]\s+|\d{1,9}[.)]\s+)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_TERMINATED = re.compile(r"[.!?][\"')\]]?$")
# Fewer words than this, and no closing punctuation: a heading, not prose.
_MIN_UNTERMINATED_WORDS = 8
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~!])")

# Clause boundaries that separate questions: "?" or ";", or a comma before and/or/but.
_CLAUSE_BREAK = re.compile(r"[?;]+|,\s*(?:and|or|but)\s+", re.IGNORECASE)


def question_parts(question: str) -> list[str]:
    """The separate questions in ``question``; "what is X and Y" stays one."""
    parts = [" ".join(part.split()) for part in _CLAUSE_BREAK.split(question)]
    return [part for part in parts if part] or [question]


def terminated(sentence: str) -> bool:
    """Whether ``sentence`` ends with its own closing punctuation."""
    return _TERMINATED.search(sentence) is not None


def sentences(text: str) -> list[str]:
    """The prose sentences of ``text``, whitespace collapsed.

    Headings are not sentences: Markdown headings are dropped, and so is a short
    fragment without closing punctuation (a title line in plain text or a PDF).
    """
    found: list[str] = []
    for paragraph in _PARAGRAPH_BREAK.split(text):
        lines = [line for line in paragraph.splitlines() if line.strip() and not _HEADING.match(line)]
        prose = " ".join(_LINE_MARKER.sub("", line).strip() for line in lines)
        for sentence in prose_sentences(prose):
            sentence = " ".join(sentence.split())
            if _TERMINATED.search(sentence) or len(sentence.split()) >= _MIN_UNTERMINATED_WORDS:
                found.append(sentence)
    return found


def escape_markdown(text: str) -> str:
    """Quoted source text rendered as text: no links, emphasis, HTML or headings of its own."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def citation_label(title: str) -> str:
    """A one-line link label that renders as the title's own text.

    Brackets become parentheses so the label stays balanced; the rest is escaped,
    because a title ending in a backslash would otherwise break the link, and one
    holding ``<https://...>`` or emphasis would turn into markup of its own.
    """
    label = " ".join(title.replace("[", "(").replace("]", ")").split())
    return escape_markdown(label) if label else "source"
