"""Read side of the stored page: the thread's last window page, only while it is current."""

from __future__ import annotations

from uuid import UUID

from django.db.models import QuerySet

from knowledgeweb.ops.prepared import PreparedQuery, as_field
from knowledgeweb.threads.models import StoredPage, Thread


def stored_page(*, thread: Thread, renderer_version: int, assembly: str) -> StoredPage | None:
    """``thread``'s stored last-window page if it was assembled at the thread's revision (as
    read with ``thread``) by this renderer and this page assembly; else None (one query)."""
    found = _STORED.run(
        thread_id=thread.pk,
        revision=thread.render_revision,
        renderer_version=renderer_version,
        assembly=assembly,
    )
    return found[0] if found else None


def _stored(*, thread_id: UUID, revision: int, renderer_version: int, assembly: str) -> QuerySet[StoredPage]:
    # The overlay of every verdict comes with the page (empty for a thread never judged):
    # reading it later would cost its readers a second query.
    return StoredPage.objects.filter(
        thread_id=thread_id, revision=revision, renderer_version=renderer_version, assembly=assembly
    )


# Read by every view of a thread's last window (knowledgeweb/ops/prepared.py).
_STORED = PreparedQuery(
    _stored,
    placeholders={
        "thread_id": UUID(int=20_261_220),
        "revision": 2_026_122_101,
        "renderer_version": 2_026_122_102,
        "assembly": "placeholder-assembly-20261221",
    },
    prepare={
        "thread_id": as_field(Thread, "id"),
        "revision": as_field(StoredPage, "revision"),
        "renderer_version": as_field(StoredPage, "renderer_version"),
    },
)


def stored_page_key(*, thread_id: UUID) -> tuple[int, int, str] | None:
    """What the stored page of ``thread_id`` was assembled at: (revision, renderer version,
    assembly), or None when it has none."""
    row = (
        StoredPage.objects.filter(thread_id=thread_id)
        .values_list("revision", "renderer_version", "assembly")
        .first()
    )
    return None if row is None else (row[0], row[1], row[2])
