"""A deterministic extractive composer: the best sentences of the top hits, each cited."""

from __future__ import annotations

import math
from dataclasses import dataclass

from knowledgeweb.answers.text import citation_label, escape_markdown, keywords, sentences, shorten
from knowledgeweb.knowledge import Evidence, read_sources
from knowledgeweb.knowledge.bounds import TRUNCATION_MARK

NOTHING_FOUND = "The search found no citable sources for this question, so there is nothing to quote."
NO_OVERLAP = "None of the retrieved passages uses the words of the question. The top result begins:"
INTRODUCTION = "From the retrieved sources:"


@dataclass(frozen=True, slots=True)
class _Candidate:
    source_rank: int
    position: int
    text: str
    source: Evidence
    stems: frozenset[str]


class ExtractiveComposer:
    """Quotes the sentences that share the most telling words with the question.

    Sentences come only from sources ``read_sources`` validates, in the order the
    tool content shows them (the retrieval's ranking). A sentence's score is the
    sum, over the question's words it contains, of how rare the word is among
    the candidate sentences; ties go to the better-ranked source, then to the
    earlier sentence. Each quoted sentence is followed by its citation link.
    """

    name = "extractive"

    def __init__(
        self, *, max_sentences: int = 3, max_sources: int = 5, per_source: int = 2, sentence_chars: int = 400
    ) -> None:
        self.max_sentences = max_sentences
        self.max_sources = max_sources
        self.per_source = per_source
        self.sentence_chars = sentence_chars

    def compose(self, *, question: str, tool_name: str, content: str, artifact: object) -> str:
        sources = _in_display_order(read_sources(tool_name, content, artifact), content)[: self.max_sources]
        if not sources:
            return NOTHING_FOUND
        candidates = [
            _Candidate(rank, position, text, source, frozenset(keywords(text)))
            for rank, source in enumerate(sources)
            for position, text in enumerate(sentences(_untruncated(source)))
        ]
        if not candidates:
            return NOTHING_FOUND
        chosen = self._choose(keywords(question), candidates)
        if not chosen:
            return f"{NO_OVERLAP}\n\n{self._line(candidates[0])}"
        return "\n".join([INTRODUCTION, "", *(self._line(candidate) for candidate in chosen)])

    def _choose(self, wanted: set[str], candidates: list[_Candidate]) -> list[_Candidate]:
        frequency = {word: sum(1 for c in candidates if word in c.stems) for word in wanted}
        weight = {word: math.log(1 + len(candidates) / count) for word, count in frequency.items() if count}

        def score(candidate: _Candidate) -> float:
            return sum(weight.get(word, 0.0) for word in candidate.stems & wanted)

        ranked = sorted(
            (c for c in candidates if score(c) > 0),
            key=lambda c: (-score(c), c.source_rank, c.position),
        )
        chosen: list[_Candidate] = []
        per_source: dict[str, int] = {}
        for candidate in ranked:
            handle = candidate.source.handle
            if per_source.get(handle, 0) >= self.per_source:
                continue
            per_source[handle] = per_source.get(handle, 0) + 1
            chosen.append(candidate)
            if len(chosen) == self.max_sentences:
                break
        return chosen

    def _line(self, candidate: _Candidate) -> str:
        quote = escape_markdown(shorten(candidate.text, self.sentence_chars))
        label = citation_label(candidate.source.title)
        return f"- {quote} [citation:{label}](#{candidate.source.handle})"


def _in_display_order(found: dict[str, Evidence], content: str) -> list[Evidence]:
    def first_seen(source: Evidence) -> int:
        index = content.find("#" + source.handle)
        return index if index >= 0 else len(content)

    return sorted(found.values(), key=first_seen)


def _untruncated(source: Evidence) -> str:
    # The truncation mark is the formatter's, not the source's: never quote it.
    return source.excerpt.removesuffix(TRUNCATION_MARK)
