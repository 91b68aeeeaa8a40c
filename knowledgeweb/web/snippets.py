"""A snippet of the text a thread search matched, for the thread list."""

from __future__ import annotations

from dataclasses import dataclass

#: Characters shown either side of the match.
CONTEXT_CHARS = 60


@dataclass(frozen=True, slots=True)
class Snippet:
    before: str
    match: str
    after: str


def snippet(text: str, search: str) -> Snippet | None:
    """The match of ``search`` in ``text`` (case-insensitive) with up to ``CONTEXT_CHARS`` either
    side, cut at spaces and marked with an ellipsis where cut; None when it does not occur."""
    needle = " ".join(search.split())
    flat = " ".join(text.split())
    if not needle:
        return None
    start = flat.lower().find(needle.lower())
    if start < 0 or len(flat.lower()) != len(flat):  # a case fold that changes lengths: no offsets
        return None
    end = start + len(needle)
    left = max(0, start - CONTEXT_CHARS)
    right = min(len(flat), end + CONTEXT_CHARS)
    before = flat[left:start]
    after = flat[end:right]
    if left > 0:
        before = "…" + (before.split(" ", 1)[1] if " " in before else before)
    if right < len(flat):
        after = (after.rsplit(" ", 1)[0] if " " in after else after) + "…"
    return Snippet(before=before, match=flat[start:end], after=after)
