"""SQLite FTS5 backend: bm25 over the external-content table ``library_chunk_fts``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection

from knowledgeweb.library.search.hits import ChunkHit


def match_expression(terms: Sequence[str]) -> str:
    """An FTS5 query that matches any term; each term is a quoted string, never syntax."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def search(terms: Sequence[str], *, limit: int, collection_names: Sequence[str] | None) -> list[ChunkHit]:
    sql = [
        "SELECT c.id, c.document_id, c.text, c.page, d.title, col.name, d.source_url,",
        "       bm25(library_chunk_fts) AS rank",
        "FROM library_chunk_fts",
        "JOIN library_chunk c ON c.id = library_chunk_fts.rowid",
        "JOIN library_document d ON d.id = c.document_id",
        "JOIN library_collection col ON col.id = d.collection_id",
        "WHERE library_chunk_fts MATCH %s",
    ]
    params: list[Any] = [match_expression(terms)]
    if collection_names is not None:
        sql.append("AND col.name IN (" + ", ".join(["%s"] * len(collection_names)) + ")")
        params.extend(collection_names)
    sql.append("ORDER BY rank, c.id LIMIT %s")
    params.append(limit)
    with connection.cursor() as cursor:
        cursor.execute("\n".join(sql), params)
        rows = cursor.fetchall()
    return [
        ChunkHit(
            chunk_id=row[0],
            document_id=row[1],
            text=row[2],
            page=row[3],
            title=row[4],
            collection_name=row[5],
            source_url=row[6],
            score=-float(row[7]),
        )
        for row in rows
    ]
