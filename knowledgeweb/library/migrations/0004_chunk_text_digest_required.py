"""The digest becomes required and indexed; SQLite's full-text triggers are put back.

Making a column NOT NULL rebuilds the table on SQLite, which drops its triggers (see
0002): they are recreated and the FTS index rebuilt after the change, and again after
the change is undone. PostgreSQL alters the column in place and keeps its GIN index.
"""

from __future__ import annotations

import importlib
from typing import Any

from django.db import migrations, models

_full_text = importlib.import_module("knowledgeweb.library.migrations.0002_chunk_full_text")
# The triggers and the rebuild, without creating the FTS table again: it survives the rebuild.
SQLITE_TRIGGERS = [s for s in _full_text.SQLITE_FORWARDS if "CREATE VIRTUAL TABLE" not in s]


def restore_triggers(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "sqlite":
        for statement in _full_text.SQLITE_BACKWARDS:
            if "DROP TRIGGER" in statement:
                schema_editor.execute(statement)
        for statement in SQLITE_TRIGGERS:
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("library", "0003_chunk_text_digest")]

    operations = [
        # Runs last when this migration is undone, after the column is nullable again.
        migrations.RunPython(migrations.RunPython.noop, restore_triggers),
        migrations.AlterField(
            model_name="chunk",
            name="text_digest",
            field=models.CharField(editable=False, max_length=64),
        ),
        migrations.AddIndex(
            model_name="chunk",
            index=models.Index(fields=["text_digest"], name="library_chunk_text_digest"),
        ),
        migrations.RunPython(restore_triggers, migrations.RunPython.noop),
    ]
