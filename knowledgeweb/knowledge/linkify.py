"""Bare URLs as links, in time linear in the text: the link grammar's linkify rule and linkifier.

markdown-it's own linkify rule and linkify-it's scanner decide which bare URLs are links
(``linkgrammar``'s decisions); these do the same in bounded work, so no hostile text
(40,000 characters of ``http://a.b/(``) costs quadratic time.
"""

from __future__ import annotations

import re
from typing import Any

from linkify_it import LinkifyIt
from markdown_it.rules_inline import StateInline

from knowledgeweb.counters import Counter

#: Longer than any scheme the linkifier knows (``mailto``): see ``linkify_inline``.
_SCHEME_WINDOW = 32
#: Bare URLs are linked only inside runs of at most this many non-space characters
#: (a longer URL stays text; written ``<…>`` or ``[…](…)`` it is still a link).
MAX_LINKIFY_RUN = 2_048
#: Characters the linkifier was handed or searched: counted operations for the tests.
linkify_counter = Counter()
_WHITESPACE = re.compile(r"\s")
_NON_SPACE_RUN = re.compile(r"\S+")
_RUN_MEMO = "_knowledgeweb_linkify_run"
# markdown-it's own pattern for the scheme before ``://`` (rules_inline/linkify.py).
_SCHEME_RE = re.compile(r"(?:^|[^a-z0-9.+-])([a-z][a-z0-9.+-]*)$", re.IGNORECASE)


def _run_allows_links(state: StateInline, start: int, pos: int) -> int | None:
    """Where the run of non-space characters holding ``src[start:pos]`` ends, or ``None``
    when that run is longer than ``MAX_LINKIFY_RUN`` (then nothing in it is linked).

    Two searches, neither longer than the cap: forward for the run's end, and backward
    through the cap's reach for the whitespace before it. The answer is kept on the
    state for the next ``://`` of the same run, so a run is searched about once.
    """
    src = state.src
    known: tuple[int, int, bool] | None = getattr(state, _RUN_MEMO, None)
    if known is not None and known[0] <= pos < known[1]:
        return known[1] if known[2] else None
    limit = start + MAX_LINKIFY_RUN + 1
    ahead = _WHITESPACE.search(src, pos, limit)
    end = ahead.start() if ahead else min(len(src), limit)
    linkify_counter.add(end - pos + 1)
    allowed = end - start <= MAX_LINKIFY_RUN
    reach = end - MAX_LINKIFY_RUN - 1
    if allowed and reach >= 0:
        behind = _WHITESPACE.search(src, reach, start)
        linkify_counter.add((behind.start() + 1 if behind else start) - reach)
        allowed = behind is not None
    setattr(state, _RUN_MEMO, (pos, end, allowed))
    return end if allowed else None


def linkify_inline(state: StateInline, silent: bool) -> bool:
    """markdown-it's inline linkify rule, deciding the same, in time linear in the text.

    The upstream rule hands the linkifier all the text after each ``://`` (and searches
    all the text pending since the last token for its scheme), and the linkifier's URL
    pattern may read to the next whitespace looking for a closing bracket: 40,000
    characters of ``http://a.b/(`` took seconds. Here the scheme is looked for in the
    last ``_SCHEME_WINDOW`` pending characters (a longer run of scheme characters is no
    scheme the linkifier knows), and the linkifier reads only the run of non-space
    characters the ``://`` is in, plus the whitespace that ends it (a URL never holds
    whitespace, and no lookahead of the pattern reads past it), and only when that run
    is at most ``MAX_LINKIFY_RUN`` characters long.
    """
    if not state.md.options.linkify or state.linkLevel > 0:
        return False
    linkify = state.md.linkify
    if linkify is None:
        raise ModuleNotFoundError("Linkify enabled but not installed.")
    pos = state.pos
    if pos + 3 > state.posMax or not state.src.startswith("://", pos):
        return False
    match = _SCHEME_RE.search(state.pending[-_SCHEME_WINDOW:])
    if not match:
        return False
    proto = match.group(1)
    start = pos - len(proto)
    end = _run_allows_links(state, start, pos)
    if end is None:
        return False
    link = linkify.match_at_start(state.src[start : end + 1])
    if not link:
        return False
    url: str = link.url.rstrip("*")  # a trailing '*' belongs to emphasis
    full_url = state.md.normalizeLink(url)
    if not state.md.validateLink(full_url):
        return False
    if not silent:
        state.pending = state.pending[: -len(proto)]
        token = state.push("link_open", "a", 1)
        token.attrs = {"href": full_url}
        token.markup = "linkify"
        token.info = "auto"
        token = state.push("text", "", 0)
        token.content = state.md.normalizeLinkText(url)
        token = state.push("link_close", "a", -1)
        token.markup = "linkify"
        token.info = "auto"
    state.pos += len(url) - len(proto)
    return True


class _BoundedLinkifyIt(LinkifyIt):
    """The linkifier, seeing no run of more than ``MAX_LINKIFY_RUN`` non-space characters.

    markdown-it's core linkify rule (which finds the e-mail addresses) hands it whole
    text tokens, and each candidate costs a scan to the end of its run: a long run with
    many candidates is quadratic. A long run is blanked with as many spaces (so every
    offset stays the same) before the linkifier looks: no URL spans whitespace, so
    nothing outside a long run is linked differently, and nothing inside one is linked.
    """

    def match_at_start(self, text: str) -> Any:
        # Counted whoever calls it: the characters handed over bound the patterns' work.
        linkify_counter.add(len(text))
        return super().match_at_start(text)

    def test(self, text: str) -> bool:
        return bool(super().test(_blank_long_runs(text)))

    def match(self, text: str) -> Any:
        return super().match(_blank_long_runs(text))


def _blank_long_runs(text: str) -> str:
    linkify_counter.add(len(text))
    if len(text) <= MAX_LINKIFY_RUN:
        return text
    parts: list[str] = []
    last = 0
    for run in _NON_SPACE_RUN.finditer(text):
        if run.end() - run.start() > MAX_LINKIFY_RUN:
            parts.append(text[last : run.start()])
            parts.append(" " * (run.end() - run.start()))
            last = run.end()
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


def bounded_linkifier() -> LinkifyIt:
    """Bare URLs that become links: written with their scheme (or an e-mail address).

    No fuzzy hosts (``setup.py``, ``README.md``: file names end in country domains), no
    ``ftp:`` (the sanitizer would leave a dead ``<a>``) and no protocol-relative ``//``
    (which would also match the tail of ``javascript://``).
    """
    return _BoundedLinkifyIt().add("ftp:", None).add("//", None).set({"fuzzy_link": False, "fuzzy_ip": False})
