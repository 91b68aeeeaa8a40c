"""The sentence closest to a claim, the claim at a citation marker, and label checks.

The citation viewer uses this module to mark, inside a cited excerpt, the
sentence(s) an answer's claim most likely rests on, and to notice when the
label an answer gave a citation names something other than the source it
points at. Sentences and significant words come from ``knowledge/text.py``, the
one text module the extractive composer reads with too.

See docs/decisions/0027-closest-passage-and-label-mismatch.md for the rules and
for how the score and ``THRESHOLD`` were chosen on real text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from knowledgeweb.knowledge.text import (
    CLOSERS,
    MAX_SENTENCES,
    TERMINATORS,
    excerpt_segments,
    sentence_words,
)

# A sentence marked as closest must cover at least this share of the claim's
# significant words (and share at least ``MIN_SHARED`` of them when the claim
# has three or more). Chosen on real sentences (bench/passage_threshold.py): from
# 0.3 to 0.5 the same supported claims are marked while marks on unsupported
# claims fall from 7 to 1 in 10; at 0.6, 7 more supported claims lose their mark.
THRESHOLD: float = 0.5
MIN_SHARED = 2


# --- Closest sentences ---------------------------------------------------------------------------


def closest_sentences(claim: str, sentences: Sequence[str]) -> tuple[int, ...]:
    """The indices of the sentences that share the most significant words with ``claim``.

    The score of a sentence is its claim coverage: the share of the claim's
    significant words it contains (so a long sentence is not penalised for saying more). The best score wins, and every sentence with
    that score is returned, in index order. Nothing is returned when the claim has
    no significant words, when the best coverage is below ``THRESHOLD``, or when
    the claim has three significant words or more and the best sentence shares
    fewer than ``MIN_SHARED`` of them (one shared word of two is not evidence). Only the first ``MAX_SENTENCES`` sentences
    are considered.
    """
    claim_words = sentence_words(claim)
    if not claim_words:
        return ()
    best = 0
    best_indices: list[int] = []
    for index, sentence in enumerate(sentences[:MAX_SENTENCES]):
        shared = len(claim_words & sentence_words(sentence))
        if shared > best:
            best, best_indices = shared, [index]
        elif shared == best and shared:
            best_indices.append(index)
    required = MIN_SHARED if len(claim_words) >= 3 else 1
    if best < required or best / len(claim_words) < THRESHOLD:
        return ()
    return tuple(best_indices)


# --- The claim around a citation marker ----------------------------------------------------------

_CLOSING_PUNCTUATION = ".,;:)]}\u3001\uff0c" + TERMINATORS


def claim_at(text: str, position: int) -> str:
    """The sentence of ``text`` that a citation marker at ``position`` stands for.

    ``text`` is one block of an answer with its citation markers removed;
    ``position`` is where the marker stood (0 to ``len(text)``). The marker
    belongs to the sentence holding the character just before it: a marker right
    after a sentence's end, or in the space after it, cites that sentence; a
    marker before the final punctuation cites the sentence it is in; a marker at
    the start of the block cites the first sentence. Whitespace left in front of
    punctuation where the marker was ("Gettysburg [1].") is removed. Returns ""
    when the block has no sentence.
    """
    if not 0 <= position <= len(text):
        raise ValueError(f"position {position} is outside the text (0 to {len(text)})")
    if 0 < position < len(text) and text[position] in _CLOSING_PUNCTUATION:
        # "Gettysburg [1]." leaves "Gettysburg ." behind: close the gap the marker left.
        gap_start = len(text[:position].rstrip())
        if gap_start < position:
            text = text[:gap_start] + text[position:]
            position = gap_start
    elif (
        0 < position < len(text)
        and not text[position].isspace()
        and text[:position].rstrip(CLOSERS)[-1:] in tuple(TERMINATORS)
    ):
        # "Gettysburg.[1]Next" was two sentences the marker kept apart.
        text = text[:position] + " " + text[position:]
    claim = ""
    offset = 0
    for segment in excerpt_segments(text):
        if segment.kind == "sentence":
            if offset >= position and claim:
                break
            claim = segment.text
        offset += len(segment.text)
    return claim


# --- Labels --------------------------------------------------------------------------------------

_CITATION_PREFIX = re.compile(r"\s*citation\s*:\s*", re.IGNORECASE)
_LABEL_EDGES = " \t\r\n\f\v[](){}<>"
# A model's own numbering: "1", "[2]", "#3", "ID:3", "source 2", "ref. 4", "1, 3", "2-4", "[1][2]".
# A word such as "source" names no source; a number is a position in a list.
_NUMBERING = re.compile(
    r"(?:(?:no|nr|id|ref|reference|source|src|doc|document|chunk|passage|excerpt|hit|result|item|citation)"
    r"\.?\s*[:#]?\s*|#\s*)?\d+(?:(?:\s*[,;&/\u2013-]\s*|\]\s*\[)#?\d+)*",
    re.IGNORECASE,
)


def display_label(label: str) -> str:
    """``label`` without a leading ``citation:`` prefix; the whole label when nothing else remains."""
    match = _CITATION_PREFIX.match(label)
    if match is None:
        return label
    rest = label[match.end() :].strip()
    return rest or label


def label_mismatch(label: str, names: Sequence[str]) -> bool:
    """Whether an answer's ``label`` for a resolved citation names something other than its source.

    ``names`` are the source's names (title, document name, dataset name: any that
    exist). The label, less a leading ``citation:`` and surrounding brackets and
    space, is not a mismatch when it is empty, a number or a numbering ("1",
    "[2]", "#3", "ID:3", "source 2"), or holds no significant word at all; nor when
    the source has no name with a significant word. Otherwise it is a mismatch
    exactly when it shares no significant word with any of the names.
    """
    rest = unicodedata.normalize("NFKC", label).strip(_LABEL_EDGES)
    match = _CITATION_PREFIX.match(rest)
    if match is not None:
        rest = rest[match.end() :]
    rest = rest.strip(_LABEL_EDGES)
    if not rest or _NUMBERING.fullmatch(rest):
        return False
    label_words = sentence_words(rest)
    name_words: set[str] = set()
    for name in names:
        name_words |= sentence_words(name)
    if not label_words or not name_words:
        return False
    return not label_words & name_words
