"""SQLite FTS5 backend: bm25 over the external-content table ``library_chunk_fts``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from django.db import connection

from knowledgeweb.library.search.hits import ChunkHit

# Unfiltered (the usual case): rank inside FTS5 first and join only the top rows,
# so a common word costs no join per match.
_TOP_THEN_JOIN = """
SELECT c.id, c.document_id, c.text, c.page, d.title, col.name, d.source_url, m.rank
FROM (
    SELECT rowid, bm25(library_chunk_fts) AS rank FROM library_chunk_fts
    WHERE library_chunk_fts MATCH %s ORDER BY rank, rowid LIMIT %s
) AS m
JOIN library_chunk c ON c.id = m.rowid
JOIN library_document d ON d.id = c.document_id
JOIN library_collection col ON col.id = d.collection_id
ORDER BY m.rank, c.id
"""

# Limited to collections: the filter must apply before the limit.
_JOIN_THEN_TOP = """
SELECT c.id, c.document_id, c.text, c.page, d.title, col.name, d.source_url, m.rank
FROM (
    SELECT rowid, bm25(library_chunk_fts) AS rank FROM library_chunk_fts
    WHERE library_chunk_fts MATCH %s
) AS m
JOIN library_chunk c ON c.id = m.rowid
JOIN library_document d ON d.id = c.document_id
JOIN library_collection col ON col.id = d.collection_id
WHERE col.name IN (SELECT value FROM json_each(%s))
ORDER BY m.rank, c.id LIMIT %s
"""


def match_expression(terms: Sequence[str]) -> str:
    """An FTS5 query that matches any term; each term is a quoted string, never syntax."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def search(terms: Sequence[str], *, limit: int, collection_names: Sequence[str] | None) -> list[ChunkHit]:
    params: list[Any]
    if collection_names is None:
        sql, params = _TOP_THEN_JOIN, [match_expression(terms), limit]
    else:
        sql, params = _JOIN_THEN_TOP, [match_expression(terms), json.dumps(list(collection_names)), limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [ChunkHit.from_row(row, score=-float(row[7])) for row in rows]
