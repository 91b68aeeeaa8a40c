"""The review's line in a thread's Markdown export header: "judged n of m" and the counts."""

from __future__ import annotations

from knowledgeweb.review.access import ThreadAccess
from knowledgeweb.review.selectors import thread_review

#: The export header's last line before the review's (``threads.rendering.export``).
_AFTER = "\n- Citations: "


def export_with_review(content: str, *, access: ThreadAccess) -> str:
    """``content`` (a Markdown export) with ``- Review: judged n of m · counts`` added to its
    header for a reader who reviews the thread or may see verdicts on it; as it was otherwise.
    The counts are the verdicts this reader may see (blind until judged, the lead sees all)."""
    review = thread_review(access=access)
    if not review.reviews and not any(entry.history for entry in review.items):
        return content
    start = content.find(_AFTER)
    if start < 0:
        return content
    end = content.find("\n", start + 1)
    if end < 0:
        end = len(content)
    return f"{content[:end]}\n- Review: {review.progress}{content[end:]}"
