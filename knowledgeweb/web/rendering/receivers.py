"""The page assembly's answers to the threads store's signals (decisions 0108 and 0110).

``thread_rendered`` (an append, an import, a re-render): the thread's last window is assembled
as a view would assemble it and stored, with every verdict laid over it when the thread has
any. ``thread_judged`` (a verdict written or deleted): the stored page's overlay of every
verdict is laid again. Each runs in its own savepoint: a failure is logged and never undoes the
write that sent it; the page is then assembled, or its verdicts laid, per view.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import transaction

from knowledgeweb.review.access import ThreadAccess
from knowledgeweb.threads.errors import ThreadNotFound
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.rendering import version
from knowledgeweb.threads.selectors.pages import stored_page, stored_page_key
from knowledgeweb.threads.services.pages import judged_store, page_store
from knowledgeweb.threads.windowing import thread_window
from knowledgeweb.web.rendering import stored
from knowledgeweb.web.rendering.review import overlaid

logger = logging.getLogger(__name__)


def store_last_window(sender: object, *, thread_id: Any, **kwargs: Any) -> None:
    """``thread_rendered``'s receiver: store the thread's last window page, unless the stored
    one is already current."""
    _guarded(_store, thread_id)


def store_judged(sender: object, *, thread_id: Any, **kwargs: Any) -> None:
    """``thread_judged``'s receiver: lay every verdict over the stored page again, if it is current."""
    _guarded(_judge, thread_id)


def _guarded(work: Callable[[Any], None], thread_id: Any) -> None:
    try:
        with transaction.atomic():
            work(thread_id)
    except Exception:  # any failure: the write stands, the page is assembled per view instead
        logger.exception("The page of thread %s was not stored; it is assembled per view.", thread_id)


def _everyone(thread: Thread) -> ThreadAccess:
    # A reader who sees every verdict and judges none (the owner, a lead, staff): their chips
    # are the same whoever they are.
    return ThreadAccess(thread=thread, user_id=0, owner=True, queues=(), led=())


def _store(thread_id: Any) -> None:
    # Read again here: the revisions and numbers this write left, under its lock.
    thread = Thread.objects.filter(pk=thread_id).first()
    if thread is None:
        return
    key = (thread.render_revision, version.RENDERER_VERSION, stored.assembly_digest())
    if stored_page_key(thread_id=thread.pk) == key:
        return
    try:
        page = stored.window_page(thread, thread_window(thread=thread))
    except ThreadNotFound:
        return
    judged = overlaid(page, _everyone(thread)).items if thread.verdict_revision else ""
    page_store(
        thread_id=thread.pk,
        revision=key[0],
        renderer_version=key[1],
        assembly=key[2],
        window=page.number,
        items=str(page.items),
        cited_html=str(page.cited_html),
        uncited_html=str(page.uncited_html),
        meta=stored.page_meta(page),
        judged_items=str(judged),
        judged_revision=thread.verdict_revision,
    )


def _judge(thread_id: Any) -> None:
    thread = Thread.objects.filter(pk=thread_id).first()
    if thread is None:
        return
    row = stored_page(
        thread=thread, renderer_version=version.RENDERER_VERSION, assembly=stored.assembly_digest()
    )
    if row is None:
        return
    page = stored.page_of(row)
    judged_store(
        thread_id=thread.pk,
        revision=row.revision,
        verdict_revision=thread.verdict_revision,
        judged_items=str(overlaid(page, _everyone(thread)).items),
    )
