"""Fill ``Thread.message_count`` and ``Thread.content_bytes`` for threads written before they were kept.

From here on the writing services keep both current (knowledgeweb.threads.quotas);
quotas read them instead of adding up messages.
"""

import json
from typing import Any

from django.db import migrations


def _size(content: str, artifact: Any) -> int:
    # Frozen copy of knowledgeweb.threads.quotas.message_size: a migration must not
    # change meaning when the code does.
    size = len(content.encode("utf-8"))
    if artifact is not None:
        canonical = json.dumps(artifact, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        size += len(canonical.encode("utf-8"))
    return size


def backfill_thread_tallies(apps: Any, schema_editor: Any) -> None:
    thread_model = apps.get_model("threads", "Thread")
    message_model = apps.get_model("threads", "Message")
    tallies: dict[Any, list[int]] = {}
    rows = message_model.objects.order_by().values_list("thread_id", "content", "artifact")
    for thread_id, content, artifact in rows.iterator(chunk_size=500):
        tally = tallies.setdefault(thread_id, [0, 0])
        tally[0] += 1
        tally[1] += _size(content, artifact)
    for thread in thread_model.objects.only("pk", "message_count", "content_bytes").iterator(chunk_size=500):
        count, size = tallies.get(thread.pk, (0, 0))
        if (thread.message_count, thread.content_bytes) != (count, size):
            # A queryset update: no auto_now, so the thread keeps its place in the list.
            thread_model.objects.filter(pk=thread.pk).update(message_count=count, content_bytes=size)


class Migration(migrations.Migration):
    dependencies = [
        ("threads", "0002_thread_tallies"),
    ]

    operations = [
        migrations.RunPython(backfill_thread_tallies, migrations.RunPython.noop, elidable=False),
    ]
