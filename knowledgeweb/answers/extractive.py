"""A deterministic extractive composer: whole sentences that answer the question, each cited, or nothing."""

from __future__ import annotations

import math
from dataclasses import dataclass

from knowledgeweb.answers.questions import Question, offers, read_question, sentence_terms
from knowledgeweb.answers.text import (
    citation_label,
    escape_markdown,
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

#: A sentence answers only when it covers at least this share of the question's terms
#: (docs/decisions/0022-finding-your-way.md and docs/decisions/0038-ask-answers-plain-questions.md). Below it, the composer
#: abstains rather than quote a sentence that merely shares a word or two with the question.
MIN_COVERAGE = 0.6
#: Further sentences are quoted only when they cover nearly as much as the best one.
RUNNER_UP_MARGIN = 0.2


@dataclass(frozen=True, slots=True)
class _Candidate:
    source_rank: int
    position: int
    text: str
    source: Evidence
    #: The sentence's own terms.
    own: frozenset[str]
    #: Its own terms and, for a sentence continuing the one before ("It reads..."), that one's.
    terms: frozenset[str]


class ExtractiveComposer:
    """Quotes the whole sentences that best answer the question, or abstains.

    Sentences come only from sources ``read_sources`` validates, in the order the
    tool content shows them (the retrieval's ranking). Each clause of the question
    ("Why do tides rise, and how do bees store honey?" has two) is read into terms
    (``knowledgeweb.answers.questions``): content words brought to one lemma and
    synonym, names met only capitalized. A sentence *covers* a term when it holds
    it, when the title of its source does, or (for a sentence opening with "It",
    "They", "This"...) when the sentence before it does.

    A sentence answers a clause when it covers at least ``min_coverage`` of the
    terms, holds at least one of them itself, and, when the clause asks about
    something besides names, holds one of those: repeating only "Abraham Lincoln"
    does not answer "Who assassinated Abraham Lincoln?". Who and when questions
    may also be answered by a sentence that offers a person or a date the question
    does not name, when its source covers enough of the terms ("Who delivered the
    Gettysburg Address?" -> "Abraham Lincoln, November 19, 1863."); such a sentence
    is then preferred. "How many" and "how long" questions are answered only by a
    sentence holding a new number. A clause no sentence answers is named as
    unanswered; when none is answered the answer is ``ABSTAIN`` and cites nothing.

    Answering sentences are ranked by coverage, then by how rare their matching
    terms are among the candidates, then by source rank and position. A sentence
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
            candidate for rank, source in enumerate(sources) for candidate in _candidates(rank, source)
        ]
        parts = [(part, self._choose(clause, candidates)) for part, clause in _clauses(question)]
        answered = [chosen for _, chosen in parts if chosen]
        if not answered:
            return ABSTAIN
        lines = [self._line(candidate) for candidate in _merge(answered, self.max_sentences)]
        missed = [part for part, chosen in parts if not chosen and read_question(part).terms]
        notes = [f"{ABSTAIN_PART} “{escape_markdown(part)}”." for part in missed]
        return "\n".join([INTRODUCTION, "", *lines, *(["", *notes] if notes else [])])

    def _choose(self, question: Question, candidates: list[_Candidate]) -> list[_Candidate]:
        wanted = question.terms
        if not wanted:
            return []
        asked = wanted - question.names
        titles = {c.source.handle: sentence_terms(c.source.title) for c in candidates}
        frequency = {word: sum(1 for c in candidates if word in c.terms) for word in wanted}
        weight = {word: math.log(1 + len(candidates) / count) for word, count in frequency.items() if count}

        def coverage(candidate: _Candidate) -> float:
            covered = (candidate.terms | titles[candidate.source.handle]) & wanted
            return len(covered) / len(wanted)

        def answers(candidate: _Candidate) -> bool:
            held = candidate.terms & wanted
            return (
                bool(candidate.own & wanted)
                and (not asked or bool(held & asked))
                and coverage(candidate) >= self.min_coverage
            )

        def offered(candidate: _Candidate) -> bool:
            kind = question.kind
            return kind is not None and offers(kind, candidate.text, question, candidate.source.title)

        def rarity(candidate: _Candidate) -> float:
            return sum(weight.get(word, 0.0) for word in candidate.terms & wanted)

        if question.kind in ("quantity", "date"):
            pool = [c for c in candidates if offered(c) and answers(c)]
        else:
            # Who and when: a sentence offering a new person or date answers even without the
            # question's verb, and is preferred to one that only repeats the question's words.
            typed = [c for c in candidates if offered(c) and coverage(c) >= self.min_coverage]
            pool = typed or [c for c in candidates if answers(c)]
        scored = [(coverage(c), len(c.own & wanted), rarity(c), c) for c in pool]
        best = max((entry[0] for entry in scored), default=0.0)
        floor = max(self.min_coverage, best - RUNNER_UP_MARGIN)
        # A sentence holding more of the terms itself goes before one that borrows them.
        ranked = sorted(
            (entry for entry in scored if entry[0] >= floor),
            key=lambda entry: (-entry[0], -entry[1], -entry[2], entry[3].source_rank, entry[3].position),
        )
        chosen: list[_Candidate] = []
        per_source: dict[str, int] = {}
        for *_, candidate in ranked:
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


#: A sentence opening with one of these continues the one before it ("It reads Markdown...").
_CONTINUING = frozenset({"it", "its", "they", "their", "them", "this", "these", "that", "those", "both"})


def _candidates(rank: int, source: Evidence) -> list[_Candidate]:
    """The source's whole sentences; one that opens with a pronoun also covers its predecessor's terms."""
    found: list[_Candidate] = []
    previous: frozenset[str] = frozenset()
    for position, text in enumerate(_whole_sentences(source)):
        terms = sentence_terms(text)
        first = text.split(maxsplit=1)[0].lower().strip(",;:") if text.split() else ""
        found.append(
            _Candidate(
                rank, position, text, source, terms, terms | previous if first in _CONTINUING else terms
            )
        )
        previous = terms
    return found


def _clauses(question: str) -> list[tuple[str, Question]]:
    """Each clause of the question, read; a bare "and when?" asks its kind about the clause before it."""
    clauses: list[tuple[str, Question]] = []
    for part in question_parts(question):
        clause = read_question(part)
        if not clause.terms and clause.kind is not None and clauses:
            before = clauses[-1][1]
            clause = Question(terms=before.terms, names=before.names, kind=clause.kind, words=before.words)
        clauses.append((part, clause))
    return clauses


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
