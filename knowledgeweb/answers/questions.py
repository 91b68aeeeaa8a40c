"""What a question asks for, and what a sentence offers, in words the extractive composer can compare.

A question is reduced to its *terms*: the stems of its content words, with irregular
verb forms brought to one lemma (brought -> bring) and a few common near-synonyms to one
term (verified -> check), so "how are citations verified?" meets "checks that the
tool content really contains the cited excerpt". A word the question capitalizes past
its first word is a *name* (Lincoln, LightRAG, Word) and is met only by the same word
capitalized: "Word documents" is not met by "plain words".

A question's *kind* says what sort of answer it wants, read from how it starts:

- ``person`` (who ...): a sentence naming someone the question does not (two or more
  capitalized words) answers it, even when it repeats none of the question's verb:
  "Who delivered the Gettysburg Address?" -> "Abraham Lincoln, November 19, 1863."
- ``time`` (when ...): likewise a sentence holding a date the question does not. "When"
  also asks for a condition ("When is a page number shown?"), so other sentences may
  still answer.
- ``date`` (what year, which day ...) and ``quantity`` (how many, how much, how long ...):
  only a sentence holding a date, or a number, the question does not can answer it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from knowledgeweb.answers.text import QUESTION_FRAMING
from knowledgeweb.knowledge.text import STOP_WORDS, stem

Kind = Literal["person", "time", "date", "quantity"]

_WORD = re.compile(r"[^\W_]+")

# Irregular English verb forms: the crude suffix stemmer cannot bring these together.
_IRREGULAR_TEXT = """
bring brought | buy bought | think thought | teach taught | catch caught | seek sought
give gave given | take took taken | write wrote written | speak spoke spoken | break broke broken
choose chose chosen | drive drove driven | rise rose risen | hide hid hidden | forget forgot forgotten
get got gotten | begin began begun | run ran | swim swam swum | sing sang sung | drink drank drunk
know knew known | grow grew grown | throw threw thrown | draw drew drawn | fly flew flown
see saw seen | go went gone | do did done | eat ate eaten | fall fell fallen | be was were been
make made | keep kept | hold held | find found | read | say said | tell told | send sent | lose lost
build built | spend spent | leave left | feel felt | mean meant | meet met | pay paid | sell sold
stand stood | understand understood | lead led | sit sat | win won | come came | become became
"""
# Near-synonyms common in questions about how something works. Kept small and general:
# each group is one meaning, and a word belongs to one group.
_SYNONYMS_TEXT = """
verify verifies verified verifying verification check checks checked checking validate validates
  validated validating validation confirm confirms confirmed
| show shows shown showing display displays displayed displaying
| store stores stored storing save saves saved saving persist persists persisted
| delete deletes deleted deleting remove removes removed removing
| create creates created creating
| start starts started starting begin begins began begun beginning
| stop stops stopped stopping end ends ended ending finish finishes finished
| need needs needed require requires required requirement
| cost costs price prices charge charges
| error errors failure failures fault faults
| allow allows allowed permit permits permitted
"""


def _lemmas() -> dict[str, str]:
    lemmas: dict[str, str] = {}
    for group in _IRREGULAR_TEXT.replace("\n", "|").split("|"):
        forms = group.split()
        for form in forms:
            lemmas[form] = forms[0]
    return lemmas


def _synonyms() -> dict[str, str]:
    found: dict[str, str] = {}
    for group in _SYNONYMS_TEXT.split("|"):
        forms = group.split()
        for form in forms:
            found[stem(form)] = stem(forms[0])
    return found


_LEMMAS = _lemmas()
_SYNONYMS = _synonyms()


def term(word: str) -> str:
    """The term a lower-case word stands for: its lemma's stem, then its synonym group's."""
    stemmed = stem(_LEMMAS.get(word, word))
    return _SYNONYMS.get(stemmed, stemmed)


def _name(word: str) -> str:
    return "^" + term(word.lower())


def sentence_terms(text: str) -> frozenset[str]:
    """The terms of ``text`` (stop words left out); a capitalized word also gives its name term."""
    found: set[str] = set()
    for word in _WORD.findall(text):
        lower = word.lower()
        if lower in STOP_WORDS:
            continue
        found.add(term(lower))
        if word[0].isupper():
            found.add(_name(word))
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class Question:
    """One clause of a question: its terms, which of them are names, and the kind of answer it wants."""

    terms: frozenset[str]
    names: frozenset[str]
    kind: Kind | None
    #: Every lower-case word of the question, to tell a new name, date or number from a repeated one.
    words: frozenset[str]


_PERSON_START = re.compile(r"^(?:who|whom|whose)\b", re.IGNORECASE)
_TIME_START = re.compile(r"^when\b", re.IGNORECASE)
_DATE_START = re.compile(
    r"^(?:in\s+|on\s+)?(?:what|which)\s+(?:year|years|date|day|month|century|decade)\b", re.IGNORECASE
)
_QUANTITY_START = re.compile(r"^how\s+(?:many|much|long|old|often|far|big|large|fast)\b", re.IGNORECASE)
_QUANTITY_FRAMING = frozenset({"long", "old", "often", "far", "big", "large", "fast"})


def question_kind(clause: str) -> Kind | None:
    if _PERSON_START.match(clause):
        return "person"
    if _TIME_START.match(clause):
        return "time"
    if _DATE_START.match(clause):
        return "date"
    if _QUANTITY_START.match(clause):
        return "quantity"
    return None


def read_question(clause: str) -> Question:
    """The terms of one clause; a capitalized word after the first is a name."""
    kind = question_kind(clause)
    words = _WORD.findall(clause)
    # In a question typed all in capitals or Title Case, a capital says nothing about names.
    cased = any(word[0].islower() for word in words[1:])
    terms: set[str] = set()
    names: set[str] = set()
    for index, word in enumerate(words):
        lower = word.lower()
        if lower in STOP_WORDS or lower in QUESTION_FRAMING or lower in {"year", "years", "date"}:
            continue
        if kind == "quantity" and index == 1 and lower in _QUANTITY_FRAMING:
            continue  # "how long", "how old": the framing of a quantity question
        if cased and index > 0 and word[0].isupper():
            names.add(_name(word))
            terms.add(_name(word))
        else:
            terms.add(term(lower))
    return Question(
        terms=frozenset(terms),
        names=frozenset(names),
        kind=kind,
        words=frozenset(word.lower() for word in words),
    )


_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
_MONTH_SET = frozenset(_MONTHS.split())
_DAYS_TEXT = "monday tuesday wednesday thursday friday saturday sunday"
_DAYS = frozenset(_DAYS_TEXT.split())
_NUMBER_WORDS_TEXT = """
one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand
million billion dozen score
"""
_NUMBER_WORDS = frozenset(_NUMBER_WORDS_TEXT.split())
_CAPITALIZED_RUN = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+\b")
_DATE = re.compile(
    r"\b(?:" + "|".join(sorted(_MONTH_SET, key=len, reverse=True)) + r")\.?\s+\d{1,2}\b"
    r"|\b\d{1,2}\s+(?:" + "|".join(sorted(_MONTH_SET, key=len, reverse=True)) + r")\b"
    r"|\b(?:1[0-9]|20)\d{2}s?\b"
    r"|\b\w+\s+(?:years|months|weeks|days|centuries|decades)\s+ago\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)*\b")
_ARTICLES = frozenset({"The", "A", "An", "This", "That", "These", "Those", "It", "Its", "Our", "We"})


def offers_person(sentence: str, question: Question, title: str) -> bool:
    """Whether ``sentence`` names someone (two capitalized words running) the question and title do not."""
    known = question.words | {word.lower() for word in _WORD.findall(title)}
    for match in _CAPITALIZED_RUN.finditer(sentence):
        parts = [part for part in match.group().split() if part not in _ARTICLES]
        if len(parts) < 2:
            continue
        lowered = [part.lower() for part in parts]
        if any(part in _MONTH_SET or part in _DAYS for part in lowered):
            continue
        if not any(part in known for part in lowered):
            return True
    return False


def offers_time(sentence: str, question: Question) -> bool:
    """Whether ``sentence`` holds a date or time expression whose numbers the question does not."""
    for match in _DATE.finditer(sentence):
        numbers = set(_WORD.findall(match.group().lower()))
        if not numbers <= question.words:
            return True
    return False


def offers_quantity(sentence: str, question: Question) -> bool:
    """Whether ``sentence`` holds a number (in digits or words) the question does not."""
    for found in _NUMBER.findall(sentence):
        if found.lower() not in question.words:
            return True
    return any(
        word.lower() in _NUMBER_WORDS and word.lower() not in question.words
        for word in _WORD.findall(sentence)
    )


def offers(kind: Kind, sentence: str, question: Question, title: str) -> bool:
    """Whether ``sentence`` holds the kind of answer the question wants."""
    if kind == "person":
        return offers_person(sentence, question, title)
    if kind in ("time", "date"):
        return offers_time(sentence, question)
    return offers_quantity(sentence, question)
