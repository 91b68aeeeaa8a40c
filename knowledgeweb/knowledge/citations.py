"""Classifying citation hrefs (docs/contract.md#reading-evidence); ``linkgrammar`` finds the links.

Accepted hrefs, exactly:

- ``#knowledge-source-<32hex>`` and ``#user-content-knowledge-source-<32hex>``
- ``#knowledge-<32hex>-<N>`` and ``#user-content-knowledge-<32hex>-<N>``

Any other href whose fragment *looks like* a knowledge citation is
*malformed*: its fragment, less an optional ``user-content-`` prefix, starts
with ``knowledge-source`` or with ``knowledge-`` and six hex digits, in any case,
percent-encoded or not, and whatever precedes the ``#``. That catches uppercase hex, a wrong length and
an absolute URL carrying such a fragment, while an ordinary heading link such
as ``#knowledge-graphs`` stays an ordinary link.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

HrefState = Literal["candidate", "malformed", "other"]
CitationState = Literal["candidate", "malformed"]

USER_CONTENT_PREFIX = "user-content-"

_ACCEPTED = re.compile(
    r"#(?:user-content-)?(knowledge-source-[a-f0-9]{32}|knowledge-[a-f0-9]{32}-[1-9][0-9]{0,2})"
)
_LOOKS_LIKE = re.compile(r"(?:user-content-)*knowledge-(?:source|[0-9a-f]{6})", re.IGNORECASE)
# Characters that may continue a handle; a handle found in text must not be followed by one.
_HANDLE_END = r"(?![A-Za-z0-9_-])"
_HANDLE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


@dataclass(frozen=True, slots=True)
class Citation:
    """A citation link written in Markdown.

    ``handle`` is the normalised fragment (no ``#``, no ``user-content-``) for
    candidates and ``None`` for malformed links.
    """

    label: str
    href: str
    state: CitationState
    handle: str | None


def classify_href(href: str) -> tuple[HrefState, str | None]:
    """Classify an href as a citation ``candidate``, ``malformed`` citation, or ``other`` link."""
    match = _ACCEPTED.fullmatch(href)
    if match:
        return "candidate", match.group(1)
    _, hash_sign, fragment = href.partition("#")
    if not hash_sign:
        return "other", None
    # Judge the fragment as a browser may: percent-decoded (``#knowledge%2Dsource-...``
    # still scrolls to the panel entry) and with compatibility characters folded.
    if _LOOKS_LIKE.match(unicodedata.normalize("NFKC", unquote(fragment)).strip()):
        return "malformed", None
    return "other", None


def contains_handle(text: str, handle: str) -> bool:
    """Whether ``#<handle>`` occurs in ``text`` as a whole handle (``-1`` does not match ``-10``)."""
    # A plain search, not a pattern per handle: a thread's validation asks for thousands of
    # distinct handles, and compiling each (past the ``re`` cache) cost more than the search.
    needle = "#" + handle
    start = text.find(needle)
    while start >= 0:
        end = start + len(needle)
        if end == len(text) or text[end] not in _HANDLE_CHARS:
            return True
        start = text.find(needle, start + 1)
    return False


def handles_in(text: str) -> list[str]:
    """Every accepted handle linked as ``#<handle>`` in ``text``, once each, in order."""
    found = (match.group(1) for match in re.finditer(_ACCEPTED.pattern + _HANDLE_END, text))
    return list(dict.fromkeys(found))


_HEX_RUN = re.compile(r"[0-9a-fA-F]+")


def malformed_reason(href: str) -> str:
    """What is wrong with a malformed citation ``href``, in a reader's words (``classify_href``
    said ``malformed``): where it points, its case, its length or its characters."""
    before, _, fragment = href.partition("#")
    if before.strip():
        return (
            "The link points at another page (it has an address before the “#”); a citation is only "
            "the fragment #knowledge-source-<32 hex digits> or #knowledge-<32 hex digits>-<n>."
        )
    decoded = unicodedata.normalize("NFKC", unquote(fragment)).strip()
    if decoded != fragment:
        return "The handle is percent-encoded or written with look-alike characters; it must be plain ASCII."
    handle = decoded
    while handle.lower().startswith(USER_CONTENT_PREFIX):
        handle = handle[len(USER_CONTENT_PREFIX) :]
    lowered = handle.lower()
    if lowered.startswith("knowledge-source-"):
        rest, shape = handle[len("knowledge-source-") :], "knowledge-source-"
        number = ""
    else:
        body = handle[len("knowledge-") :]
        rest, _, number = body.partition("-")
        shape = "knowledge-"
    if handle != lowered and (handle[: len(shape)] != shape or rest != rest.lower()):
        return "The handle has upper-case letters; handles are lower case (0-9 and a-f)."
    if not _HEX_RUN.fullmatch(rest or "-"):
        return "The handle holds characters other than the hexadecimal digits 0-9 and a-f."
    if len(rest) != 32:
        return f"The handle's id has {len(rest)} hexadecimal digits; a handle's id has exactly 32."
    if shape == "knowledge-" and not re.fullmatch(r"[1-9][0-9]{0,2}", number):
        return "The chunk number after the id must be a whole number from 1 to 999."
    return "The link is not in an accepted citation form."
