"""Text fragments: a link to a source URL that asks the browser to scroll to the cited words.

The directive (https://wicg.github.io/scroll-to-text-fragment/) is ``:~:text=`` followed
by percent-encoded text, after the URL's fragment if it has one. Only the excerpt's
opening words are used: a browser matches a directive against the rendered page, and a
short run from one line of one sentence is what most likely reads the same there
(an excerpt's line breaks and later sentences may be laid out differently, or not
at all). A browser without text fragments simply opens the URL.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from knowledgeweb.knowledge.bounds import TRUNCATION_MARK

#: The most words of the excerpt a directive quotes.
MAX_WORDS = 8
#: A word that ends a sentence: closing punctuation, maybe followed by closing quotes or brackets.
# Escapes, not the characters: the full-width marks and the quotes look like ASCII ones.
_SENTENCE_END = re.compile("[.!?\u2026\u3002\uff01\uff1f][\"')\\]\u00bb\u2019\u201d]*\\Z")
_DIRECTIVE = ":~:"


def text_fragment_url(url: str, excerpt: str) -> str | None:
    """``url`` with a text directive quoting the opening words of ``excerpt``, or None.

    None when ``url`` is not an absolute http(s) URL (or holds whitespace or control
    characters) and when the excerpt has no words. An existing fragment is kept and
    the directive follows it (``#frag:~:text=...``); an existing directive is replaced.
    """
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        return None
    base, _, fragment = url.partition("#")
    try:
        parts = urlsplit(base)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    words = opening_words(excerpt)
    if words is None:
        return None
    fragment = fragment.split(_DIRECTIVE, 1)[0]
    return f"{base}#{fragment}{_DIRECTIVE}text={directive_encode(words)}"


def opening_words(excerpt: str, *, max_words: int = MAX_WORDS) -> str | None:
    """Up to ``max_words`` words from the first line that has any, ending with its first sentence.

    A word is a run without whitespace holding at least one letter or digit; marks
    before the first word (list bullets, Markdown's ``#`` and ``-``) are left out
    since a page seldom shows them as text.
    """
    if excerpt.endswith(TRUNCATION_MARK):
        excerpt = excerpt[: -len(TRUNCATION_MARK)]
    for line in excerpt.splitlines():
        tokens = line.split()
        while tokens and not any(ch.isalnum() for ch in tokens[0]):
            tokens.pop(0)
        if not tokens:
            continue
        taken: list[str] = []
        for token in tokens[:max_words]:
            taken.append(token)
            if _SENTENCE_END.search(token):
                break
        return " ".join(taken)
    return None


def directive_encode(text: str) -> str:
    """``text`` percent-encoded for a text directive: everything but ASCII letters, digits, ``.``, ``_``, ``~``.

    The spec reserves ``-`` (prefix and suffix), ``,`` (start and end) and ``&``
    (between directives), so they are encoded like every other character that is
    not unreserved; spaces become ``%20``. ``quote`` never encodes ``-``: done by hand.
    """
    return quote(text, safe="", errors="replace").replace("-", "%2D")
