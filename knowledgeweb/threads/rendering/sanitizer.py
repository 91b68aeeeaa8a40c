"""The sanitizer, the second stage of the render pipeline (docs/architecture.md#pages-and-dom-hooks).

A strict allowlist of the tags CommonMark and the grammar's GitHub extensions (tables,
strikethrough) produce. On top of bleach:

- every ``id`` and ``name`` a user wrote gets the ``user-content-`` prefix, so no
  message can create an element that shadows the sources panel's
  ``knowledge-source-<id>`` anchors or a global the page's script reads
  (DOM clobbering);
- links keep only ``http:``/``https:``/``mailto:`` URLs and same-document ``#``
  fragments; relative and protocol-relative URLs are dropped;
- external links get ``rel="noopener noreferrer"``.

Citation resolution (see ``resolution``) runs as a token filter inside the same
pass, so a message is parsed once. It sees each link after bleach's allowlist
and before the link policy here: a citation-looking relative link is then
reported as malformed rather than silently losing its href. For the same reason
bleach keeps a citation-looking href whatever its scheme (``ftp://…#knowledge-…``):
the citation stage turns it into a malformed hook with no href, and
``UserContentFilter`` drops any such href that reaches it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

from bleach import html5lib_shim
from bleach.sanitizer import BleachSanitizerFilter, Cleaner

from knowledgeweb.knowledge import classify_href
from knowledgeweb.knowledge.citations import USER_CONTENT_PREFIX

Token = dict[str, Any]
TokenFilter = Callable[..., Any]

#: The base class of a token filter run inside the sanitizing pass (``make_cleaner``). bleach is
#: used only in this module, so that moving to another sanitizer (nh3) touches this file alone.
FilterBase = html5lib_shim.Filter


ALLOWED_TAGS = frozenset(
    {
        "a",
        "blockquote",
        "br",
        "code",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "li",
        "ol",
        "p",
        "pre",
        "s",
        "strong",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tr",
        "ul",
    }
)

_LANGUAGE_CLASS = re.compile(r"language-[A-Za-z0-9_+#.-]{1,40}")
#: A table cell's alignment, as the renderer writes it (no ``style``: the CSP forbids inline styles).
CELL_ALIGN_CLASSES = frozenset({"align-left", "align-center", "align-right"})


def _allowed_attribute(tag: str, name: str, value: str) -> bool:
    if name in {"id", "name"}:
        return True  # kept, then prefixed by ``UserContentFilter``
    if tag == "a":
        return name in {"href", "title"}
    if tag == "ol":
        return name == "start" and value.isdigit()
    if tag == "code":
        return name == "class" and bool(_LANGUAGE_CLASS.fullmatch(value))
    if tag in {"th", "td"}:
        return name == "class" and value in CELL_ALIGN_CLASSES
    return False


ALLOWED_PROTOCOLS = frozenset({"http", "https", "mailto"})
EXTERNAL_REL = "noopener noreferrer"


def _attribute(token: Token, name: str) -> str | None:
    value = token.get("data", {}).get((None, name))
    return None if value is None else str(value)


def href_target(raw: str) -> str:
    """The href as a browser reads it: entities decoded, surrounding space removed."""
    return html5lib_shim.convert_entities(raw).strip()


def link_kind(href: str) -> str | None:
    """``"fragment"``, ``"external"``, or ``None`` for a link that must be dropped."""
    if href.startswith("#"):
        return "fragment"
    # Browsers ignore tabs and newlines inside URLs; judge the URL they would follow.
    compact = re.sub(r"[\t\n\r]", "", href)
    try:
        parts = urlsplit(compact)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme in {"http", "https"} and parts.netloc:
        return "external"
    if scheme == "mailto" and parts.path:
        return "external"
    return None


#: Marks an element the citation stage built (its ids are the page's own, not the message's).
#: Bleach's allowlist removes every ``data-`` attribute a message could carry before the
#: citation stage runs, so only that stage can set it; ``UserContentFilter`` removes it.
OWN_ID_MARK = (None, "data-knowledgeweb-hook")


class UserContentFilter(html5lib_shim.Filter):
    """Prefix ``id``/``name``; drop unsafe hrefs; mark external links ``noopener noreferrer``.

    The citation hooks' own ids (``OWN_ID_MARK``) keep their names: the page links to them
    (backlinks, popovers), and a message's ids, all prefixed, can never equal one.
    """

    def __iter__(self) -> Iterator[Token]:
        for token in super().__iter__():
            if token["type"] in {"StartTag", "EmptyTag"} and token.get("data"):
                if OWN_ID_MARK in token["data"]:
                    token["data"] = {k: v for k, v in token["data"].items() if k != OWN_ID_MARK}
                    if token["name"] == "a":  # the resolved hook: its href still meets the link policy
                        token["data"] = self._attributes(token, own_ids=True)
                else:
                    token["data"] = self._attributes(token)
            yield token

    def _attributes(self, token: Token, *, own_ids: bool = False) -> dict[tuple[str | None, str], str]:
        attrs: dict[tuple[str | None, str], str] = {}
        for key, value in token["data"].items():
            _, name = key
            if name in {"id", "name"} and not own_ids:
                attrs[key] = USER_CONTENT_PREFIX + value
            elif name == "href":
                kind = link_kind(href_target(value))
                if kind is None:
                    continue
                attrs[key] = value
                if kind == "external":
                    attrs[(None, "rel")] = EXTERNAL_REL
            else:
                attrs[key] = value
        return attrs


class _SanitizerFilter(BleachSanitizerFilter):
    """Bleach's sanitizer, except that a knowledge-citation href outside the allowed
    schemes is kept for the citation stage: dropped here, it would leave a bare ``<a>``
    where the citations API reports a malformed citation."""

    def sanitize_uri_value(self, value: str, allowed_protocols: Any) -> str | None:
        kept: str | None = super().sanitize_uri_value(value, allowed_protocols)
        if kept is None and classify_href(href_target(value))[0] != "other":
            return value
        return kept


class _Cleaner(Cleaner):
    """``Cleaner`` with ``_SanitizerFilter`` in place of bleach's own sanitizer filter."""

    def clean(self, text: str) -> str:
        if not text:
            return ""
        filtered: Any = _SanitizerFilter(
            source=self.walker(self.parser.parseFragment(text)),
            allowed_tags=self.tags,
            attributes=self.attributes,
            strip_disallowed_tags=self.strip,
            strip_html_comments=self.strip_comments,
            css_sanitizer=self.css_sanitizer,
            allowed_protocols=self.protocols,
        )
        for filter_class in self.filters:
            filtered = filter_class(source=filtered)
        return str(self.serializer.render(filtered))


def make_cleaner(extra_filters: Sequence[TokenFilter] = ()) -> Cleaner:
    """A fresh cleaner (bleach cleaners keep parser state, so one per use).

    ``extra_filters`` run before ``UserContentFilter``, which always has the last word.
    """
    return _Cleaner(
        tags=ALLOWED_TAGS,
        attributes=_allowed_attribute,
        protocols=ALLOWED_PROTOCOLS,
        strip=True,
        strip_comments=True,
        filters=[*extra_filters, UserContentFilter],
    )


def sanitize_html(html: str) -> str:
    """Sanitize an HTML fragment with the project's allowlist."""
    return str(make_cleaner().clean(html))
