"""The review's line in a thread's Markdown export header: "judged n of m" and the counts."""

from __future__ import annotations

from knowledgeweb.review.access import ThreadAccess
from knowledgeweb.review.selectors import thread_review
from knowledgeweb.threads.interchange.export import ThreadExport

#: The export header's last line before the review's (``threads.interchange.markdown``).
_AFTER = "\n- Citations: "


def export_with_review(export: ThreadExport, *, access: ThreadAccess) -> str:
    """The export's content; a Markdown export with ``- Review: judged n of m · counts`` added to its
    header for a reader who reviews the thread or may see verdicts on it; as it was otherwise.
    The counts are the verdicts this reader may see (blind until judged, the lead sees all)."""
    content = export.content
    if not export.filename.endswith(".md"):
        return content
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
