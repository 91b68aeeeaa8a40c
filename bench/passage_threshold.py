"""How candidate closeness scores and thresholds do on real excerpts (docs/decisions/0027-closest-passage-and-label-mismatch.md).

    .venv/bin/python bench/passage_threshold.py

For every claim of ``tests/unit/passage_claims.py`` and every chunk of its
document, a rule should mark exactly the supporting sentences in the chunk that
holds them, and nothing in the others; against every chunk of a document on
another subject it should mark nothing. Counts only: no timing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

if __package__ in {None, ""}:
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))

from knowledgeweb.knowledge.text import sentence_words, sentences
from tests.unit.passage_claims import CLAIMS, DOCUMENTS, GROUPS, chunks

Score = Callable[[frozenset[str], frozenset[str]], float]


def coverage(claim: frozenset[str], sentence: frozenset[str]) -> float:
    return len(claim & sentence) / len(claim)


def dice(claim: frozenset[str], sentence: frozenset[str]) -> float:
    return 2 * len(claim & sentence) / (len(claim) + len(sentence))


def jaccard(claim: frozenset[str], sentence: frozenset[str]) -> float:
    return len(claim & sentence) / len(claim | sentence)


@dataclass(frozen=True)
class Rule:
    name: str
    score: Score
    threshold: float
    min_shared: int  # shared words needed when the claim has three or more

    def mark(self, claim: str, candidates: list[str]) -> tuple[int, ...]:
        words = sentence_words(claim)
        if not words:
            return ()
        scored = [(self.score(words, sentence_words(s)), len(words & sentence_words(s))) for s in candidates]
        if not scored:
            return ()
        best = max(score for score, _ in scored)
        top = tuple(i for i, (score, _) in enumerate(scored) if score == best)
        shared = scored[top[0]][1]
        if best < self.threshold or shared == 0 or shared < min(self.min_shared, len(words)):
            return ()
        return top


@dataclass
class Tally:
    exact: int = 0
    partial: int = 0
    wrong: int = 0
    missed: int = 0
    unsupported_marked: int = 0
    other_chunk_marked: int = 0
    other_subject_marked: int = 0


def evaluate(rule: Rule) -> Tally:
    tally = Tally()
    for claim in CLAIMS:
        for document in DOCUMENTS:
            same_subject = GROUPS[document] == GROUPS[claim.document]
            if same_subject and document != claim.document:
                continue  # a sibling document may well say the same thing: not judged
            for chunk in chunks(document):
                candidates = sentences(chunk)
                marked = set(rule.mark(claim.text, candidates))
                if document != claim.document:
                    tally.other_subject_marked += bool(marked)
                    continue
                gold = {i for i, s in enumerate(candidates) if any(piece in s for piece in claim.gold)}
                if not claim.gold:
                    tally.unsupported_marked += bool(marked)
                elif not gold:
                    tally.other_chunk_marked += bool(marked)
                elif marked == gold:
                    tally.exact += 1
                elif marked & gold:
                    tally.partial += 1
                elif marked:
                    tally.wrong += 1
                else:
                    tally.missed += 1
    return tally


def check_gold() -> None:
    for claim in CLAIMS:
        for piece in claim.gold:
            found = [s for chunk in chunks(claim.document) for s in sentences(chunk) if piece in s]
            assert len(found) == 1, (claim.text, piece, found)


def main() -> None:
    check_gold()
    supported = sum(1 for claim in CLAIMS if claim.gold)
    print(f"{len(CLAIMS)} claims ({supported} supported, {len(CLAIMS) - supported} unsupported)")
    print(
        f"{'rule':<28} {'exact':>5} {'part':>5} {'wrong':>5} {'miss':>5} "
        f"{'unsup':>5} {'otherchunk':>10} {'othersubj':>9}"
    )
    rules = [Rule(f"coverage>={t} shared>=2", coverage, t, 2) for t in (0.25, 0.3, 0.34, 0.4, 0.5, 0.6)]
    rules += [Rule(f"coverage>={t} shared>=1", coverage, t, 1) for t in (0.3, 0.4, 0.5)]
    rules += [Rule(f"dice>={t} shared>=2", dice, t, 2) for t in (0.2, 0.25, 0.3, 0.35, 0.4, 0.5)]
    rules += [Rule(f"jaccard>={t} shared>=2", jaccard, t, 2) for t in (0.1, 0.15, 0.2, 0.25, 0.3)]
    for rule in rules:
        t = evaluate(rule)
        print(
            f"{rule.name:<28} {t.exact:>5} {t.partial:>5} {t.wrong:>5} {t.missed:>5} "
            f"{t.unsupported_marked:>5} {t.other_chunk_marked:>10} {t.other_subject_marked:>9}"
        )


if __name__ == "__main__":
    main()
