"""A thread page's window as the template shows it (``WindowPage``): read as stored when the
write that made the thread's last window stored it, else assembled from the stored renders.

Every write that changes what a page shows raises the thread's revision and sends
``thread_rendered`` inside its transaction; ``web.rendering.receivers`` answers it by assembling
the last window, exactly as a view would (``window_page``), and storing it (``StoredPage``). A view
of the last window then reads one row instead of assembling the window (about ten queries and
the numbering of every citation): it is served only while the thread's revision, the renderer
and this page assembly's code are those it was made with, so a stale page is never shown, only
assembled again. Other windows are assembled per view. What differs between readers (verdict
chips, controls, forms) is laid over the page afterwards, never stored with it
(docs/decisions/0108-stored-window-page.md).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from django.utils.safestring import SafeString

from knowledgeweb.threads.models import StoredPage, Thread
from knowledgeweb.threads.rendering import version
from knowledgeweb.threads.selectors.pages import stored_page
from knowledgeweb.threads.windowing import ThreadWindow, thread_window, window_questions
from knowledgeweb.web.outline import OUTLINE_MIN_TURNS, Turn, turn_outline
from knowledgeweb.web.rendering.window import render_window

#: The package whose code assembles a page (this file is knowledgeweb/web/rendering/stored.py).
_PACKAGE = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True)
class WindowPage:
    """One window of a thread page, the same for every reader of it."""

    number: int
    #: The thread's last window, and the nearest windows before and after holding a problem.
    last: int
    previous_issues: int | None
    next_issues: int | None
    #: The seqs of the window's first and last messages (0 and 0 for an empty thread).
    first_seq: int
    last_seq: int
    #: The messages as ``<li>`` items, and each one's (id hex, start, end) in ``items``.
    items: SafeString
    places: tuple[tuple[str, int, int], ...]
    turns: tuple[Turn, ...]
    cited_html: SafeString
    uncited_html: SafeString
    cited_count: int
    uncited_count: int
    #: The walk's stops on this window, and the anchor of the first.
    issue_count: int
    first_issue: str
    #: The stored page this was read from (None when assembled per view).
    stored: StoredPage | None = None

    @property
    def outline_shown(self) -> bool:
        return len(self.turns) >= OUTLINE_MIN_TURNS

    @property
    def retrieved_total(self) -> int:
        return self.cited_count + self.uncited_count


def window_page(thread: Thread, window: ThreadWindow) -> WindowPage:
    """Assemble ``window`` of ``thread`` from its stored renders and places."""
    view = render_window(thread, window)
    outline = turn_outline(
        view,
        window_questions(messages=window.messages),
        turns_before=window.turns_before,
        answers_before=window.answers_before,
    )
    messages = window.messages
    return WindowPage(
        number=window.number,
        last=window.last,
        previous_issues=window.previous_issues,
        next_issues=window.next_issues,
        first_seq=messages[0].seq if messages else 0,
        last_seq=messages[-1].seq if messages else 0,
        items=outline.items,
        places=outline.places,
        turns=outline.turns,
        cited_html=view.cited_html,
        uncited_html=view.uncited_html,
        cited_count=len(view.cited),
        uncited_count=len(view.uncited),
        issue_count=len(view.issues),
        first_issue=view.issues[0].anchor if view.issues else "",
    )


def served_page(thread: Thread, number: int | None) -> WindowPage:
    """Window ``number`` of ``thread`` (its last when None) as its page shows it: the stored page
    when it is current and is that window, else assembled; a window past either end raises
    ``ThreadNotFound``."""
    row = stored_page(thread=thread, renderer_version=version.RENDERER_VERSION, assembly=assembly_digest())
    if row is not None and number in (None, row.window):
        return page_of(row)
    return window_page(thread, thread_window(thread=thread, number=number))


def page_meta(page: WindowPage) -> dict[str, Any]:
    """What a stored row keeps of ``page`` besides its HTML: the format ``page_of`` reads."""
    return {
        "last": page.last,
        "previous_issues": page.previous_issues,
        "next_issues": page.next_issues,
        "seqs": [page.first_seq, page.last_seq],
        "places": [list(place) for place in page.places],
        "turns": [[t.number, t.anchor, t.heading] for t in page.turns],
        "counts": [page.cited_count, page.uncited_count, page.issue_count],
        "first_issue": page.first_issue,
    }


def page_of(row: StoredPage) -> WindowPage:
    """The page a stored row holds (without any verdict laid over it)."""
    meta = row.meta
    cited, uncited, issues = meta["counts"]
    # Stored by ``_store`` from an assembled page: sanitized message HTML and escaped entries.
    return WindowPage(
        number=row.window,
        last=meta["last"],
        previous_issues=meta["previous_issues"],
        next_issues=meta["next_issues"],
        first_seq=meta["seqs"][0],
        last_seq=meta["seqs"][1],
        items=SafeString(row.items),
        places=tuple((hex_id, start, end) for hex_id, start, end in meta["places"]),
        turns=tuple(Turn(number, anchor, heading) for number, anchor, heading in meta["turns"]),
        cited_html=SafeString(row.cited_html),
        uncited_html=SafeString(row.uncited_html),
        cited_count=cited,
        uncited_count=uncited,
        issue_count=issues,
        first_issue=meta["first_issue"],
        stored=row,
    )


@cache
def assembly_digest() -> str:
    """A digest of the package's code: which build assembled a stored page. Any change to the
    code counts (over-invalidating costs one assembly per thread; missing a change would serve
    a page the running code would not build)."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        digest.update(path.relative_to(_PACKAGE).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:32]
