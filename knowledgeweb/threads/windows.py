"""Windows of a thread page: where each message is shown, fixed when it is written.

A thread page sends one window of messages at a time (``?window=k``, numbered from the
thread's start). A window closes when it holds ``WINDOW_MESSAGES`` messages or when the
next message would take what the page sends of it past ``WINDOW_BYTES``; a message larger
than a whole window gets a window of its own. Windows are given at write, in ``seq`` order,
and a re-render keeps them, so a window's URL names the same messages for ever.

Pure functions: the renders service stores what these compute; the read side only reads it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

#: At most this many messages in one window.
WINDOW_MESSAGES = 100
#: At most this many characters sent for one window's messages (a tool message's summary,
#: any other message's whole render, and the panel entries of the sources they retrieved).
#: With the entries of sources cited from earlier windows, a first paint stays under one
#: megabyte.
WINDOW_BYTES = 400_000

#: A hit's number slot in a tool message's render (validated handles), in hit order.
HIT_SLOT = re.compile(r'<span class="hit-number" data-hit-slot="([a-z0-9-]+)"></span>')
#: A hit whose evidence failed validation names its handle here.
UNVERIFIED_HANDLE = re.compile(r'data-unverified-handle="([^"]+)"')

_SUMMARY_END = "</summary>"


@dataclass(frozen=True, slots=True)
class WindowTail:
    """The thread's last window so far: its number, how many messages and characters it holds."""

    number: int = 0
    messages: int = 0
    size: int = 0

    def place(self, size: int) -> WindowTail:
        """The tail after adding a message that sends ``size`` characters (its window is the
        result's ``number``)."""
        fits = (
            self.number > 0
            and self.messages < WINDOW_MESSAGES
            and (self.messages == 0 or self.size + size <= WINDOW_BYTES)
        )
        if fits:
            return WindowTail(self.number, self.messages + 1, self.size + size)
        return WindowTail(self.number + 1, 1, size)


def sent_size(html: str, brief: str, entries: Mapping[str, Sequence[str]] | None = None) -> int:
    """What the page sends for a message at first paint, in characters: its HTML (a tool
    message's brief), and the sources panel's entries of the sources it retrieved."""
    panel = sum(len(part) for parts in (entries or {}).values() for part in parts)
    return len(brief or html) + panel


def tool_brief(html: str, hits_url: str) -> str:
    """A tool message's first paint: its ``<details>`` up to the summary, then a link that loads
    the hits (``hits_url``, the fragment route) on expand; "" when ``html`` has no summary.

    ``html`` was built by our template at write (``web/fragments/tool_message.html``); the URL
    is ours (a UUID path), so nothing here needs escaping.
    """
    end = html.find(_SUMMARY_END)
    if not html.startswith("<details") or end < 0:
        return ""
    head = html[: end + len(_SUMMARY_END)]
    return (
        f'{head}<div class="tool-hits" data-tool-hits="{hits_url}">'
        f'<a href="{hits_url}" data-tool-hits-link>Show the hits</a></div></details>'
    )


def problem_count(citations: Iterable[Mapping[str, Any]], uncited: bool) -> int:
    """The walk's stops in one message: citations with no source or malformed, labels naming
    another source, and an answer that cites nothing."""
    count = 1 if uncited else 0
    for citation in citations:
        state = citation.get("state")
        if (state in {"unresolved", "malformed"} and citation.get("anchor")) or (
            state == "resolved" and citation.get("anchor") and citation.get("label_mismatch") is True
        ):
            count += 1
    return count


def hit_order(html: str, handles: Iterable[str]) -> list[str]:
    """A tool message's validated handles in the order its hits show them (jsonb keeps no key
    order), then any the hit list does not show."""
    known = list(handles)
    wanted = set(known)
    shown = [h for h in dict.fromkeys(HIT_SLOT.findall(html)) if h in wanted]
    seen = set(shown)
    return shown + [h for h in known if h not in seen]


@dataclass(frozen=True, slots=True)
class Place:
    """Where one source lives in its thread (what ``ThreadSource`` stores)."""

    handle: str
    kind: str
    message_id: UUID
    seq: int
    position: int
    window: int
    entry: Sequence[str]
    evidence: Mapping[str, Any] | None


def tool_places(
    *,
    message_id: UUID,
    seq: int,
    window: int,
    html: str,
    entries: Mapping[str, Sequence[str]],
    evidence: Sequence[Mapping[str, Any]],
) -> list[Place]:
    """The places one tool message gives its sources: each validated handle (found) and each
    handle whose evidence failed validation (failed), in hit order."""
    records = {str(record["handle"]): record for record in evidence}
    places = [
        Place(h, "found", message_id, seq, n, window, list(entries[h]), records.get(h))
        for n, h in enumerate(hit_order(html, entries), start=1)
    ]
    failed = [h for h in dict.fromkeys(UNVERIFIED_HANDLE.findall(html)) if h not in entries]
    places += [Place(h, "failed", message_id, seq, 0, window, [], None) for h in failed]
    return places


@dataclass
class CitedIn:
    """How many claims of one window cite one source, and the first of them."""

    count: int
    anchor: str
    seq: int
    answer: int


def citation_counts(
    answers: Iterable[tuple[Sequence[Mapping[str, Any]], int, int, int]],
) -> dict[tuple[str, int], CitedIn]:
    """Where answers cite each source: ``answers`` are (stored citations, window, seq, answer
    number) in ``seq`` order; the result maps (handle, window) to its count and first claim."""
    counted: dict[tuple[str, int], CitedIn] = {}
    for citations, window, seq, answer in answers:
        for citation in citations:
            handle, anchor = citation.get("handle"), citation.get("anchor")
            if citation.get("state") != "resolved" or not isinstance(handle, str) or not anchor:
                continue
            cited = counted.get((handle, window))
            if cited is None:
                counted[(handle, window)] = CitedIn(1, str(anchor), seq, answer)
            else:
                cited.count += 1
    return counted


def window_href(window: int, anchor: str = "") -> str:
    """The link to ``anchor`` in another window of the same thread page (it works without
    JavaScript: the window's URL, then the anchor)."""
    fragment = f"#{anchor}" if anchor else ""
    return f"?window={window}{fragment}"


def windows_of(sizes: Sequence[int], tail: WindowTail | None = None) -> list[int]:
    """The window of each of a run of new messages (in ``seq`` order), after ``tail``."""
    current = tail or WindowTail()
    out: list[int] = []
    for size in sizes:
        current = current.place(size)
        out.append(current.number)
    return out
