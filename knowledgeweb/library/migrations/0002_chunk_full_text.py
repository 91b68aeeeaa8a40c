"""Full-text index over ``library_chunk.text``, per database vendor.

SQLite: an external-content FTS5 table kept in sync by triggers, ranked with bm25().
PostgreSQL: a GIN index on the ``to_tsvector('english', text)`` expression, ranked with
ts_rank(); the search backend repeats the exact expression so the planner uses it.

Both use English stemming (Porter on SQLite, Snowball on PostgreSQL) and keep
diacritics, so the same query finds the same chunks on either database.

Note for later migrations: SQLite rebuilds a table for many ALTERs, which drops its
triggers. A migration that alters ``library_chunk`` must recreate them (re-run
``_sqlite_forwards``) and rebuild the index.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

SQLITE_FORWARDS = [
    """
    CREATE VIRTUAL TABLE library_chunk_fts USING fts5(
        text, content='library_chunk', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 0'
    )
    """,
    """
    CREATE TRIGGER library_chunk_fts_insert AFTER INSERT ON library_chunk BEGIN
        INSERT INTO library_chunk_fts(rowid, text) VALUES (new.id, new.text);
    END
    """,
    """
    CREATE TRIGGER library_chunk_fts_delete AFTER DELETE ON library_chunk BEGIN
        INSERT INTO library_chunk_fts(library_chunk_fts, rowid, text) VALUES ('delete', old.id, old.text);
    END
    """,
    """
    CREATE TRIGGER library_chunk_fts_update AFTER UPDATE ON library_chunk BEGIN
        INSERT INTO library_chunk_fts(library_chunk_fts, rowid, text) VALUES ('delete', old.id, old.text);
        INSERT INTO library_chunk_fts(rowid, text) VALUES (new.id, new.text);
    END
    """,
    # Index whatever rows already exist.
    "INSERT INTO library_chunk_fts(library_chunk_fts) VALUES ('rebuild')",
]

SQLITE_BACKWARDS = [
    "DROP TRIGGER IF EXISTS library_chunk_fts_update",
    "DROP TRIGGER IF EXISTS library_chunk_fts_delete",
    "DROP TRIGGER IF EXISTS library_chunk_fts_insert",
    "DROP TABLE IF EXISTS library_chunk_fts",
]

POSTGRES_FORWARDS = [
    "CREATE INDEX library_chunk_text_search ON library_chunk "
    "USING GIN (to_tsvector('english'::regconfig, text))",
]

POSTGRES_BACKWARDS = ["DROP INDEX IF EXISTS library_chunk_text_search"]


def _run(schema_editor: Any, statements: dict[str, list[str]]) -> None:
    for statement in statements.get(schema_editor.connection.vendor, []):
        schema_editor.execute(statement)


def forwards(apps: Any, schema_editor: Any) -> None:
    _run(schema_editor, {"sqlite": SQLITE_FORWARDS, "postgresql": POSTGRES_FORWARDS})


def backwards(apps: Any, schema_editor: Any) -> None:
    _run(schema_editor, {"sqlite": SQLITE_BACKWARDS, "postgresql": POSTGRES_BACKWARDS})


class Migration(migrations.Migration):
    dependencies = [("library", "0001_initial")]

    operations = [migrations.RunPython(forwards, backwards)]
