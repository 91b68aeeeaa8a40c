"""What the browser tests watch a page for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Watched:
    """What a page did that it must not: alerts and other dialogs, script errors, console errors."""

    dialogs: list[str]
    errors: list[str]


def watch_shown(page: Any, selector: str) -> None:
    """Count, from now on, every time the element at ``selector`` is shown (its ``hidden``
    attribute removed), however briefly: a card that opens and closes again within one task
    still counts. Read the count with ``times_shown`` once the page has passed the moment that
    would show it (instead of sleeping before a negative assertion)."""
    page.evaluate(
        """(selector) => {
            const element = document.querySelector(selector);
            window.shownCounts = window.shownCounts || {};
            window.shownCounts[selector] = 0;
            new MutationObserver((records) => {
                // Each record holds the value before its change; the value after it is the
                // next record's old value (the attribute's current value for the last one).
                records.forEach((record, n) => {
                    const after = n + 1 < records.length ? records[n + 1].oldValue : element.getAttribute("hidden");
                    if (record.oldValue !== null && after === null) window.shownCounts[selector] += 1;
                });
            }).observe(element, { attributes: true, attributeFilter: ["hidden"], attributeOldValue: true });
        }""",
        selector,
    )


def times_shown(page: Any, selector: str) -> int:
    return int(page.evaluate("(selector) => window.shownCounts[selector]", selector))


#: The scripts a thread page loads without a follow-up form (a reader who may not ask),
#: each from its own file: a page that ran any other script would have let content in.
THREAD_PAGE_SCRIPTS = ["citations.js", "walk.js", "windows.js"]
