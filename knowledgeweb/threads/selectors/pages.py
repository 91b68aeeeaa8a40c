"""Read side of the stored page: the thread's last window page, only while it is current."""

from __future__ import annotations

from uuid import UUID

from knowledgeweb.threads.models import StoredPage, Thread


def stored_page(*, thread: Thread, renderer_version: int, assembly: str) -> StoredPage | None:
    """``thread``'s stored last-window page if it was assembled at the thread's revision (as
    read with ``thread``) by this renderer and this page assembly; else None (one query)."""
    return StoredPage.objects.filter(
        thread=thread,
        revision=thread.render_revision,
        renderer_version=renderer_version,
        assembly=assembly,
    ).first()


def stored_page_key(*, thread_id: UUID) -> tuple[int, int, str] | None:
    """What the stored page of ``thread_id`` was assembled at: (revision, renderer version,
    assembly), or None when it has none."""
    row = (
        StoredPage.objects.filter(thread_id=thread_id)
        .values_list("revision", "renderer_version", "assembly")
        .first()
    )
    return None if row is None else (row[0], row[1], row[2])
