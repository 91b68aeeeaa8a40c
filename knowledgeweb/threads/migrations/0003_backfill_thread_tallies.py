"""Fill the thread tallies of threads written before they existed."""

import json

from django.db import migrations


def _bytes(content, artifact):
    size = len(content.encode("utf-8", "surrogatepass"))
    if artifact is not None:
        text = json.dumps(artifact, ensure_ascii=False, separators=(",", ":"))
        size += len(text.encode("utf-8", "surrogatepass"))
    return size


def backfill(apps, schema_editor):
    Thread = apps.get_model("threads", "Thread")
    Message = apps.get_model("threads", "Message")
    for thread in Thread.objects.all().iterator():
        rows = Message.objects.filter(thread=thread).values_list("content", "artifact")
        count = 0
        size = 0
        for content, artifact in rows.iterator():
            count += 1
            size += _bytes(content, artifact)
        # update() keeps updated_at (auto_now) as it was: a backfill is not activity.
        Thread.objects.filter(pk=thread.pk).update(message_count=count, content_bytes=size)


class Migration(migrations.Migration):
    dependencies = [("threads", "0002_thread_tallies")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
