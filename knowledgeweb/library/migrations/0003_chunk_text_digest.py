"""Every chunk gets the SHA-256 of its text (library.passages.text_digest), existing ones included.

The column is added nullable, so SQLite adds it in place (a NOT NULL column would rebuild
the table and drop the full-text triggers of 0002); 0004 makes it required once every
row has its digest. Existing rows are filled in primary-key order, a batch at a time, so
a large index is never held in memory at once.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations, models

# The live function, not a copy: a stored digest is only useful if it equals what
# ``passage_path`` computes for the same text.
from knowledgeweb.library.passages import text_digest

BATCH_SIZE = 500


def backfill(apps: Any, schema_editor: Any) -> None:
    chunks = apps.get_model("library", "Chunk").objects.using(schema_editor.connection.alias)
    last = 0
    while True:
        batch = list(
            chunks.filter(pk__gt=last, text_digest__isnull=True)
            .order_by("pk")
            .only("pk", "text")[:BATCH_SIZE]
        )
        if not batch:
            return
        for chunk in batch:
            chunk.text_digest = text_digest(chunk.text)
        chunks.bulk_update(batch, ["text_digest"])
        last = batch[-1].pk


class Migration(migrations.Migration):
    dependencies = [("library", "0002_chunk_full_text")]

    operations = [
        migrations.AddField(
            model_name="chunk",
            name="text_digest",
            field=models.CharField(editable=False, max_length=64, null=True),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop, elidable=True),
    ]
