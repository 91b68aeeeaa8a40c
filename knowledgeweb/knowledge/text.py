"""The one place text is read as language: sentences, stop words, stems, significant words.

Both readers of prose use it: the citation viewer's passages
(``knowledge/passages.py``: the sentence a claim rests on, label checks) and the
extractive composer (``answers/``: which sentence answers a question). Keeping
one splitter, one stop list and one stemmer means a sentence the viewer marks is
a sentence the composer could have quoted, and a word the composer matches is a
word the viewer matches. Everything here is lexical, deterministic and linear in
its input: no model, no randomness, no dictionary beyond the short lists below.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

SegmentKind = Literal["sentence", "space", "break"]

# Past this many sentences the rest of a text is one final sentence, so the
# work of every function here stays bounded whatever a provider returns.
MAX_SENTENCES = 2000


@dataclass(frozen=True, slots=True)
class Segment:
    """One piece of an excerpt; the pieces of an excerpt join back to it exactly."""

    text: str
    kind: SegmentKind
    index: int | None  # sentence number (0-based, in order) for kind == "sentence", else None


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# --- Sentence boundaries -------------------------------------------------------------------------

# The full-width ! and ? (U+FF01, U+FF1F) and the ideographic full stop (U+3002), as escapes.
_CJK_TERMINATORS = "\u3002\uff01\uff1f"
TERMINATORS = ".!?\u2026" + _CJK_TERMINATORS
# What may follow a sentence's final punctuation and still belong to the sentence.
CLOSERS = "\"'\u201d\u2019\u00bb\u203a)]}\u300d\u300f\u3011\u3009\u300b*"
_OPENERS = "\"'\u201c\u2018\u00ab\u2039([{\u300c\u300e\u3010\u3008\u300a*"
# Whitespace runs, and CJK sentence ends followed directly by more text (Chinese and
# Japanese put no space between sentences). The atomic group keeps the closers with
# the terminator, so "。」" followed by a space is not split between its two characters.
_BOUNDARY = re.compile(rf"\s+|(?>[{_CJK_TERMINATORS}]+[{re.escape(CLOSERS)}]*)(?=\S)")
_LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
# How much of the word before a space is looked at: enough for any abbreviation,
# and a constant, so that a 200,000-character word costs no more than a short one.
_WORD_TAIL = 48

# Titles and words that stand before a name: never the end of a sentence.
_TITLES = _word_set(
    "mr mrs ms dr prof st mt ft rev fr sr gen col capt cpt lt sgt maj cmdr adm sen rep gov pres hon messrs mme mlle"
    " mssrs"
)
# Latin and reference abbreviations that introduce what follows: never the end of a sentence.
_NEVER_FINAL = _word_set("e.g i.e cf vs viz approx ca resp")
# Abbreviations that stand before a number ("No. 5", "Fig. 3", "Nov. 19"): not an end
# when a digit follows; an end otherwise ("The answer was no. Then ...").
_BEFORE_NUMBER = _word_set(
    "no nos nr fig figs vol vols p pp ch chap sec sect art eq eqs ed op ref para pl"
    " jan feb mar apr jun jul aug sep sept oct nov dec"
)
# Abbreviations that often end a sentence too ("... and so on, etc. Then"): an end
# unless a lowercase word or a digit follows.
_UNLESS_LOWER = _word_set("etc al inc ltd co corp bros jr esp dept univ assn est min max")
# Dotted initialisms: "U.S.", "Ph.D.", "a.m.".
_DOTTED = re.compile(r"(?:[^\W\d_]\.){2,}|[^\W\d_]{1,2}\.(?:[^\W\d_]{1,2}\.)+")


def _first_letter(text: str, start: int) -> str:
    """The first character of the word at ``start``, past any opening quotes or brackets."""
    end = min(len(text), start + 8)  # a constant look, whatever follows
    position = start
    while position < end and text[position] in _OPENERS:
        position += 1
    return text[position] if position < end else ""


def _ends_sentence(text: str, word_start: int, word_end: int, next_start: int) -> bool:
    """Whether the word ``text[word_start:word_end]`` ends a sentence; the next word starts at ``next_start``."""
    word = text[max(word_start, word_end - _WORD_TAIL) : word_end]
    core = word.rstrip(CLOSERS)
    if not core or core[-1] not in TERMINATORS:
        return False
    following = _first_letter(text, next_start)  # "" at the end of the text
    lowercase_next = following.islower()
    if core.endswith(("…", "...")):
        # An ellipsis inside a sentence ("we can not ... hallow") goes on in lowercase.
        return not lowercase_next
    if core[-1] != ".":
        return True  # ! ? and their CJK forms
    stem = core[:-1].lstrip(_OPENERS)
    lowered = stem.casefold()
    if len(stem) == 1 and stem.isalpha() and stem.isupper():
        return False  # an initial: "J. R. R. Tolkien"
    if lowered in _TITLES or lowered in _NEVER_FINAL:
        return False
    if _DOTTED.fullmatch(core.lstrip(_OPENERS)):
        # "U.S.", "Ph.D." never end a sentence here; "a.m." does unless lowercase follows.
        if lowered in _NEVER_FINAL or stem.upper() == stem:
            return False
        return not (lowercase_next or following.isdigit())
    if lowered in _BEFORE_NUMBER:
        return not following.isdigit()
    if lowered in _UNLESS_LOWER:
        return not (lowercase_next or following.isdigit())
    return True


def _is_break(whitespace: str) -> bool:
    return len(_LINE_BREAK.findall(whitespace, 0, len(whitespace))) >= 2


#: Excerpts up to this long are remembered once split: a source is split for its panel entry
#: and again for each answer that cites it, and a re-render splits every one of them.
CACHED_EXCERPT_CHARS = 4_000


def excerpt_segments(excerpt: str) -> list[Segment]:
    """Split ``excerpt`` into sentences and the whitespace between them (see ``_split``)."""
    if len(excerpt) <= CACHED_EXCERPT_CHARS:
        return list(_split_cached(excerpt))
    return _split(excerpt)


@lru_cache(maxsize=4_096)
def _split_cached(excerpt: str) -> tuple[Segment, ...]:
    return tuple(_split(excerpt))


def _split(excerpt: str) -> list[Segment]:
    """Split ``excerpt`` into sentences and the whitespace between them.

    The segments partition the excerpt exactly: joined, they are ``excerpt``.
    A whitespace run holding two or more line breaks is a ``break`` (a paragraph
    break, which also ends a sentence); other whitespace between or around
    sentences is ``space``; whitespace inside a sentence, single line breaks of
    hard-wrapped PDF text included, stays in the sentence's text. A sentence ends
    at ``. ! ? …`` (or their CJK forms), with any closing quotes or brackets, before
    whitespace or the end; not at abbreviations, initials, decimals or an
    ellipsis followed by lowercase. The CJK forms also end a sentence directly
    before more text. Past ``MAX_SENTENCES`` sentences, the rest is one sentence.
    Linear in the length of the excerpt.
    """
    segments: list[Segment] = []
    count = 0  # sentences closed so far
    sentence_start: int | None = None  # where the open sentence began
    word_start = 0  # where the word before the next boundary began

    def close_sentence(end: int) -> None:
        nonlocal count, sentence_start
        if sentence_start is not None:
            segments.append(Segment(excerpt[sentence_start:end], "sentence", count))
            count += 1
            sentence_start = None

    capped = False
    for match in _BOUNDARY.finditer(excerpt):
        start, end = match.span()
        if sentence_start is None and (start > word_start or not excerpt[start].isspace()):
            sentence_start = word_start  # a word (or a CJK sentence end) opens a sentence
        if sentence_start is not None and count == MAX_SENTENCES - 1:
            capped = True  # the open sentence is the last one: it takes the rest
            break
        if not excerpt[start].isspace():
            # A CJK sentence end directly followed by the next sentence.
            close_sentence(end)
        else:
            whitespace = excerpt[start:end]
            if _is_break(whitespace):
                close_sentence(start)
                segments.append(Segment(whitespace, "break", None))
            elif (
                sentence_start is None
                or end == len(excerpt)  # trailing whitespace is never part of a sentence
                or _ends_sentence(excerpt, word_start, start, end)
            ):
                close_sentence(start)
                segments.append(Segment(whitespace, "space", None))
        word_start = end
    if not capped:
        if sentence_start is None and word_start < len(excerpt):
            sentence_start = word_start
        close_sentence(len(excerpt))
        return segments
    assert sentence_start is not None  # noqa: S101 - the cap is reached only with an open sentence
    rest = excerpt[sentence_start:]
    body = rest.rstrip()
    close_sentence(sentence_start + len(body))
    trailing = rest[len(body) :]
    if trailing:
        segments.append(Segment(trailing, "break" if _is_break(trailing) else "space", None))
    return segments


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, in order (``excerpt_segments`` without the whitespace)."""
    return [segment.text for segment in excerpt_segments(text) if segment.kind == "sentence"]


# --- Significant words ---------------------------------------------------------------------------

# English closed-class words: articles, pronouns, auxiliaries and modals,
# prepositions, conjunctions, determiners and quantifiers, a few discourse adverbs,
# and the pieces apostrophes leave behind ("don't" -> "don", "t"). They occur in
# almost every sentence, so counting them would make unrelated sentences overlap.
# The list stops there on purpose: longer lists (300+ words) also drop open-class
# words such as "new", "great", "first" or "world", which carry claims ("a new nation").
# "against", "one" and "per" are closed-class but stay significant: they carry what a
# question asks ("resolved against the tool messages", "one answer", "per query"), and
# leaving them in changed no mark on the passage claims (bench/passage_threshold.py).
STOP_WORDS = _word_set(
    """
    a about above after again all almost along also although am among an and any anyone anything
    are around as at
    be because been before being below beside besides between beyond both but by
    can cannot could did do does doing done down during each either else etc even ever every
    few for from further had has have having he her here hers herself him himself his how however
    if in indeed into is it its itself just least less let like many may me might more most much must my
    myself neither no nor not now of off often on once only onto or other others otherwise ought our
    nobody nothing ours ourselves out over own quite rather same shall she should since so some someone
    something still such everyone everything
    than that the their theirs them themselves then there therefore these they this those though through
    throughout thus to too toward towards under unless until up upon us very via was we well were what
    whatever when whenever where whereas wherever whether which while who whoever whom whose why will
    with within without would yet you your yours yourself yourselves
    aren couldn didn doesn don hadn hasn haven isn ll mustn needn shan shouldn ve wasn weren won wouldn
    """
)
_WORD = re.compile(r"[^\W_]+")
_VOWELS = frozenset("aeiouy")
_NO_UNDOUBLE = frozenset("lsz")


def _has_vowel(stem: str) -> bool:
    return any(char in _VOWELS for char in stem)


def stem(word: str) -> str:
    """A light, conservative English suffix stripper, so "ships" and "ship" compare equal.

    In order, on a casefolded word of four letters or more (shorter words are kept):

    1. plurals: -sses -> -ss, -ies -> -y (words of five letters or more),
       -xes/-ches/-shes/-zes -> drop -es, otherwise a final -s is dropped unless the
       word ends in -ss, -us or -is ("glass", "census", "basis");
    2. -ied -> -y (five letters or more), else -ed or -ing is dropped when what is
       left has a vowel and two letters or more ("designed" -> "design", "thing" stays),
       and a doubled final consonant other than l, s, z is undoubled ("stopped" -> "stop");
    3. a final -e is dropped, so "dedicate", "dedicated" and "dedicating" all give "dedicat".

    Words that are not English pass through with at most these suffixes removed;
    the stem is a comparison key, never shown.
    """
    if len(word) < 4 or not word.isalpha():
        return word
    # 1. plurals
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ies") and len(word) >= 5:
        word = word[:-3] + "y"
    elif word.endswith(("xes", "ches", "shes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    # 2. past tense and participles
    stripped = False
    if word.endswith("ied") and len(word) >= 5:
        word = word[:-3] + "y"
    elif word.endswith("ed") and len(word) >= 4 and _has_vowel(word[:-2]):
        word, stripped = word[:-2], True
    elif word.endswith("ing") and len(word) >= 5 and _has_vowel(word[:-3]):
        word, stripped = word[:-3], True
    if stripped and len(word) >= 3 and word[-1] == word[-2] and word[-1] not in _VOWELS | _NO_UNDOUBLE:
        word = word[:-1]
    # 3. a silent final e
    if len(word) >= 3 and word.endswith("e"):
        word = word[:-1]
    return word


@lru_cache(maxsize=16_384)
def sentence_words(text: str) -> frozenset[str]:
    """The significant words of ``text``: what closeness and label checks compare.

    NFKC-normalised and casefolded; split on every character that is not a
    letter or digit (underscores too, so file names split into words); stop
    words dropped; one-character tokens dropped unless they are digits; each
    remaining word reduced by ``stem``.
    """
    words: set[str] = set()
    for token in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        if token in STOP_WORDS or (len(token) == 1 and not token.isdigit()):
            continue
        words.add(stem(token))
    return frozenset(words)


def text_caches_clear() -> None:
    """Forget every memoized split and word set, as a fresh process starts (``bench/render.py``
    compares re-renders in that state: a cache warm with one thread's sentences but too small
    for the other's would measure the cache, not the re-render)."""
    _split_cached.cache_clear()
    sentence_words.cache_clear()
