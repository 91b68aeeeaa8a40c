"""The sanitizer, the second stage of the render pipeline (docs/architecture.md#pages-and-dom-hooks).

One plain allowlist pass of bleach over the HTML the markdown stage wrote: the tags
CommonMark and the grammar's GitHub extensions (tables, strikethrough) produce, and
per tag the attributes it may keep (``_allowed_attribute``). bleach is used only here,
through its public ``Cleaner`` and nothing else, so moving to another sanitizer (nh3)
touches this file alone. On top of the allowlist:

- links keep only ``http:``/``https:``/``mailto:`` URLs and same-document ``#``
  fragments (the allowlist refuses any other ``href``); relative and
  protocol-relative URLs are dropped;
- every ``id`` and ``name`` a message wrote gets the ``user-content-`` prefix, so no
  message can create an element that shadows the sources panel's
  ``knowledge-source-<id>`` anchors or a global the page's script reads
  (DOM clobbering);
- external links get ``rel="noopener noreferrer"``.

The last two rewrite attributes the allowlist kept, which an allowlist cannot do: they
are made on bleach's own output (``_user_content``), whose form is fixed (every ``<``
in text or in a value is escaped, every value quoted), so reading its start tags is
exact; a tag that does not read as expected raises rather than passing unread.

The citation hooks are the page's markup, not the message's: they never pass through
here (``pipeline`` puts them in the sanitized HTML), so nothing a message writes can
pose as one, whatever the allowlist keeps.
"""

from __future__ import annotations

import html as html_entities
import re
from urllib.parse import urlsplit

import bleach

from knowledgeweb.knowledge.citations import USER_CONTENT_PREFIX

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
        return True  # kept, then prefixed by ``_user_content``
    if tag == "a":
        return name == "title" or (name == "href" and link_kind(href_target(value)) is not None)
    if tag == "ol":
        return name == "start" and value.isdigit()
    if tag == "code":
        return name == "class" and bool(_LANGUAGE_CLASS.fullmatch(value))
    if tag in {"th", "td"}:
        return name == "class" and value in CELL_ALIGN_CLASSES
    return False


ALLOWED_PROTOCOLS = frozenset({"http", "https", "mailto"})
EXTERNAL_REL = "noopener noreferrer"


def href_target(raw: str) -> str:
    """The href as a browser reads it: character references decoded, surrounding space removed.

    bleach hands the allowlist attribute values as written, references and all.
    """
    return html_entities.unescape(raw).strip()


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


# bleach writes every start tag as ``<name`` and `` attr="value"`` pairs (or ``'value'`` when
# the value holds ``"`` and no ``'``), with ``<`` escaped in text and in values alike.
_ATTRIBUTE = r""" ([a-z][a-z0-9:_.-]*)=("[^"]*"|'[^']*')"""
_START_TAG = re.compile(rf"<([a-z][a-z0-9]*)((?:{_ATTRIBUTE})*)>")
_ATTRIBUTES = re.compile(_ATTRIBUTE)
_TAG_START = re.compile(r"<[a-z]")


class SanitizerOutputError(Exception):
    """bleach's output held a start tag in a form ``_user_content`` cannot read (never expected)."""


def _rewrite(tag: re.Match[str]) -> str:
    name, attributes = tag.group(1), tag.group(2)
    if not attributes:
        return tag.group(0)
    parts: list[str] = []
    for attribute in _ATTRIBUTES.finditer(attributes):
        key, quoted = attribute.group(1), attribute.group(2)
        if key in {"id", "name"}:
            parts.append(f" {key}={quoted[0]}{USER_CONTENT_PREFIX}{quoted[1:]}")
            continue
        parts.append(attribute.group(0))
        if name == "a" and key == "href" and link_kind(href_target(quoted[1:-1])) == "external":
            parts.append(f' rel="{EXTERNAL_REL}"')
    return f"<{name}{''.join(parts)}>"


def _user_content(cleaned: str) -> str:
    """Prefix every ``id``/``name`` and mark external links, in bleach's output."""
    rewritten, count = _START_TAG.subn(_rewrite, cleaned)
    if count != len(_TAG_START.findall(cleaned)):
        raise SanitizerOutputError("a start tag in the sanitizer's output did not read as expected")
    return rewritten


def sanitize_html(html: str) -> str:
    """Sanitize an HTML fragment with the project's allowlist.

    A fresh ``Cleaner`` each time: bleach's cleaners keep parser state, so one per use.
    """
    cleaner = bleach.Cleaner(
        tags=ALLOWED_TAGS,
        attributes=_allowed_attribute,
        protocols=ALLOWED_PROTOCOLS,
        strip=True,
        strip_comments=True,
    )
    return _user_content(cleaner.clean(html))
