"""A deterministic extractive composer: whole sentences that answer the question, each cited, or nothing."""

from __future__ import annotations

import math
from dataclasses import dataclass

from knowledgeweb.answers.text import (
    citation_label,
    content_words,
    escape_markdown,
    keywords,
    question_parts,
    sentences,
    terminated,
)
from knowledgeweb.knowledge import Evidence, read_sources
from knowledgeweb.knowledge.bounds import TRUNCATION_MARK

NOTHING_FOUND = "The search found no citable sources for this question, so there is nothing to quote."
ABSTAIN = "None of the retrieved passages answers this question."
INTRODUCTION = "From the retrieved sources:"
ABSTAIN_PART = "None of the retrieved passages answers"

#: A sentence answers only when it covers at least this share of the question's content
#: words (docs/decisions.md, "Ask"). Below it, the composer abstains rather than quote a
#: sentence that merely shares a word or two with the question.
MIN_COVERAGE = 0.6
#: Further sentences are quoted only when they cover nearly as much as the best one.
RUNNER_UP_MARGIN = 0.2


@dataclass(frozen=True, slots=True)
class _Candidate:
    source_rank: int
    position: int
    text: str
    source: Evidence
    stems: frozenset[str]


class ExtractiveComposer:
    """Quotes the whole sentences that best cover the question, or abstains.

    Sentences come only from sources ``read_sources`` validates, in the order the
    tool content shows them (the retrieval's ranking). The question's content
    words are its stems minus stop words and question framing ("what", "explain",
    "name" ...). A sentence *covers* a content word when the sentence, or the
    title of its source, holds it; at least one must be in the sentence itself.
    A sentence qualifies when it covers at least ``min_coverage`` of the content
    words; when none does, the answer is ``ABSTAIN`` and cites nothing.
    A question of several clauses ("Why do tides rise, and how do bees store
    honey?") is judged clause by clause, and a clause no sentence answers is
    named as unanswered. Qualifying sentences are ranked by coverage, then by how rare their matching
    words are among the candidates, then by source rank and position. A sentence
    is quoted whole, never cut; the last fragment of a shortened excerpt is not a
    sentence and is never quoted.
    """

    name = "extractive"

    def __init__(
        self,
        *,
        max_sentences: int = 3,
        max_sources: int = 5,
        per_source: int = 2,
        min_coverage: float = MIN_COVERAGE,
    ) -> None:
        self.max_sentences = max_sentences
        self.max_sources = max_sources
        self.per_source = per_source
        self.min_coverage = min_coverage

    def compose(self, *, question: str, tool_name: str, content: str, artifact: object) -> str:
        sources = _in_display_order(read_sources(tool_name, content, artifact), content)[: self.max_sources]
        if not sources:
            return NOTHING_FOUND
        candidates = [
            _Candidate(rank, position, text, source, frozenset(keywords(text)))
            for rank, source in enumerate(sources)
            for position, text in enumerate(_whole_sentences(source))
        ]
        parts = [(part, self._choose(content_words(part), candidates)) for part in question_parts(question)]
        answered = [chosen for _, chosen in parts if chosen]
        if not answered:
            return ABSTAIN
        lines = [self._line(candidate) for candidate in _merge(answered, self.max_sentences)]
        missed = [part for part, chosen in parts if not chosen and content_words(part)]
        notes = [f"{ABSTAIN_PART} “{escape_markdown(part)}”." for part in missed]
        return "\n".join([INTRODUCTION, "", *lines, *(["", *notes] if notes else [])])

    def _choose(self, wanted: set[str], candidates: list[_Candidate]) -> list[_Candidate]:
        if not wanted:
            return []
        titles = {c.source.handle: frozenset(keywords(c.source.title)) for c in candidates}
        frequency = {word: sum(1 for c in candidates if word in c.stems) for word in wanted}
        weight = {word: math.log(1 + len(candidates) / count) for word, count in frequency.items() if count}

        def coverage(candidate: _Candidate) -> float:
            own = candidate.stems & wanted
            if not own:
                return 0.0
            return len(own | (titles[candidate.source.handle] & wanted)) / len(wanted)

        def rarity(candidate: _Candidate) -> float:
            return sum(weight.get(word, 0.0) for word in candidate.stems & wanted)

        scored = [(coverage(c), rarity(c), c) for c in candidates]
        best = max((entry[0] for entry in scored), default=0.0)
        floor = max(self.min_coverage, best - RUNNER_UP_MARGIN)
        ranked = sorted(
            (entry for entry in scored if entry[0] >= floor),
            key=lambda entry: (-entry[0], -entry[1], entry[2].source_rank, entry[2].position),
        )
        chosen: list[_Candidate] = []
        per_source: dict[str, int] = {}
        for _, _, candidate in ranked:
            handle = candidate.source.handle
            if per_source.get(handle, 0) >= self.per_source:
                continue
            per_source[handle] = per_source.get(handle, 0) + 1
            chosen.append(candidate)
            if len(chosen) == self.max_sentences:
                break
        return chosen

    def _line(self, candidate: _Candidate) -> str:
        label = citation_label(candidate.source.title)
        return f"- {escape_markdown(candidate.text)} [citation:{label}](#{candidate.source.handle})"


def _merge(answered: list[list[_Candidate]], limit: int) -> list[_Candidate]:
    """The parts' sentences taken in turn (each answered part gets its best one), without repeats."""
    merged: list[_Candidate] = []
    seen: set[tuple[str, int]] = set()
    cap = max(limit, len(answered))
    for rank in range(max(len(chosen) for chosen in answered)):
        for chosen in answered:
            if rank < len(chosen) and len(merged) < cap:
                key = (chosen[rank].source.handle, chosen[rank].position)
                if key not in seen:
                    seen.add(key)
                    merged.append(chosen[rank])
    return merged


def _in_display_order(found: dict[str, Evidence], content: str) -> list[Evidence]:
    def first_seen(source: Evidence) -> int:
        index = content.find("#" + source.handle)
        return index if index >= 0 else len(content)

    return sorted(found.values(), key=first_seen)


def _whole_sentences(source: Evidence) -> list[str]:
    """The excerpt's sentences, less the cut one at the end of a shortened excerpt.

    The truncation mark is the formatter's, not the source's: never quoted. What
    precedes it is a sentence cut mid-way unless it ends with its own punctuation.
    """
    shortened = source.excerpt.endswith(TRUNCATION_MARK)
    found = sentences(source.excerpt.removesuffix(TRUNCATION_MARK))
    if (shortened or source.truncated) and found and not terminated(found[-1]):
        found.pop()
    return found
