"""Write side of the stored page (``StoredPage``): the thread's revision, raised by every write
that changes what its page shows, and the last window's page as the page assembly built it.

The store keeps the page; what is in it is the page assembly's (``web.rendering.stored``),
which receives ``thread_rendered`` and calls ``page_store``.
"""

from __future__ import annotations

from typing import Any

from django.db.models import F

from knowledgeweb.threads.models import StoredPage, Thread
from knowledgeweb.threads.signals import thread_judged, thread_rendered


def revision_raise(thread: Thread) -> None:
    """Raise the thread's revision (every stored page of it goes out of date at once) and tell
    the page assembly, inside the caller's transaction."""
    Thread.objects.filter(pk=thread.pk).update(render_revision=F("render_revision") + 1)
    thread_rendered.send(sender=Thread, thread_id=thread.pk)


def page_store(
    *,
    thread_id: Any,
    revision: int,
    renderer_version: int,
    assembly: str,
    window: int,
    items: str,
    cited_html: str,
    uncited_html: str,
    meta: dict[str, Any],
    judged_items: str = "",
    judged_revision: int = 0,
) -> None:
    """Keep ``thread_id``'s last window page, assembled at ``revision``, in place of the last one."""
    StoredPage.objects.update_or_create(
        thread_id=thread_id,
        defaults={
            "revision": revision,
            "renderer_version": renderer_version,
            "assembly": assembly,
            "window": window,
            "items": items,
            "cited_html": cited_html,
            "uncited_html": uncited_html,
            "meta": meta,
            "judged_items": judged_items,
            "judged_revision": judged_revision,
        },
    )


def verdicts_changed(thread_id: Any) -> None:
    """A verdict on ``thread_id`` was written or deleted: raise its verdict revision (a stored
    overlay of every verdict goes out of date) and tell the page assembly, inside the caller's
    transaction."""
    Thread.objects.filter(pk=thread_id).update(verdict_revision=F("verdict_revision") + 1)
    thread_judged.send(sender=Thread, thread_id=thread_id)


def judged_store(*, thread_id: Any, revision: int, verdict_revision: int, judged_items: str) -> None:
    """Keep the stored page's overlay of every verdict, if the page is still the one it was
    laid over (assembled at ``revision``)."""
    StoredPage.objects.filter(thread_id=thread_id, revision=revision).update(
        judged_items=judged_items, judged_revision=verdict_revision
    )
