"""Turn a user's question into search terms both backends treat alike.

User text never reaches FTS5 ``MATCH`` or ``to_tsquery`` as syntax: it is split
into plain words, English stop words are dropped (PostgreSQL's own list, so both
databases ignore the same words), and each backend quotes what is left.
"""

from __future__ import annotations

import re

# PostgreSQL's ``english`` stop-word list (tsearch_data/english.stop).
_POSTGRES_ENGLISH_STOP = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she
    her hers herself it its itself they them their theirs themselves what which who whom this that
    these those am is are was were be been being have has had having do does did doing a an the and
    but if or because as until while of at by for with about against between into through during
    before after above below to from up down in out on off over under again further then once here
    there when where why how all any both each few more most other some such no nor not only own
    same so than too very s t can will just don should now
"""
STOP_WORDS = frozenset(_POSTGRES_ENGLISH_STOP.split())

#: Longer questions add little ranking signal and make queries expensive.
MAX_TERMS = 32
MAX_TERM_LENGTH = 64

# Letters and digits only: underscores, apostrophes and punctuation separate words,
# as they do in both FTS5's unicode61 tokenizer and PostgreSQL's parser.
_WORD = re.compile(r"[^\W_]+")


def search_terms(query: str) -> list[str]:
    """The distinct lower-case words of ``query`` worth searching for, in order."""
    terms: list[str] = []
    for match in _WORD.finditer(query.lower()):
        word = match.group()
        if word in STOP_WORDS or len(word) > MAX_TERM_LENGTH or word in terms:
            continue
        terms.append(word)
        if len(terms) == MAX_TERMS:
            break
    return terms
