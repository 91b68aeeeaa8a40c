"""The threads store's signals: deleting a message forgets its cache entries, and a write that
changed what a page shows says so (``thread_rendered``).

Deleting a message, by any path, forgets its cache entries.

Stored renders go with their message (a database cascade); the only cache
entries keyed by a message are its memoized validations. A thread deleted in
the admin, through the ORM's cascade from its owner, or by a service sends
``post_delete`` for each message (Django collects them because this receiver
exists), so nothing is left behind; the cache's time to live bounds anything a
raw SQL delete would miss.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import Signal, receiver

from knowledgeweb.memo import memo_delete_many
from knowledgeweb.threads.evidence import evidence_cache_key
from knowledgeweb.threads.models import Message


@receiver(post_delete, sender=Message, dispatch_uid="knowledgeweb.threads.forget_message_cache")
def forget_message_cache(sender: type[Message], instance: Message, **kwargs: Any) -> None:
    key = evidence_cache_key(instance)
    memo_delete_many([key])
    # A reader that validated the message while the deleting transaction was open may
    # have written the entry back; forget it again once the deletion is final.
    transaction.on_commit(lambda: memo_delete_many([key]))


#: Sent inside the transaction of every write that changed what a page of the thread shows (an
#: append, an import, a re-render), once the thread's ``render_revision`` is raised, and by
#: ``thread_rerender`` even when nothing needed rendering again (a deploy may have changed the
#: page's assembly). Keyword argument: ``thread_id``. The page assembly stores the thread's last
#: window from it (``web.rendering.stored``); a receiver's failure must never undo the write.
thread_rendered = Signal()

#: Sent inside the transaction of every verdict written or deleted on the thread, once its
#: ``verdict_revision`` is raised (``threads.services.pages.verdicts_changed``). Keyword
#: argument: ``thread_id``. The page assembly lays every verdict over the stored page from it.
thread_judged = Signal()
