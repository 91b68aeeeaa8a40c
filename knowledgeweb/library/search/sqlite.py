"""SQLite FTS5 backend: bm25 over the external-content table ``library_chunk_fts``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from django.db import connection

from knowledgeweb.library.search.hits import ChunkHit

# Both queries return a ``ChunkHit`` as it stands, bm25 negated into its score.

# Unfiltered (the usual case): rank inside FTS5 first and join only the top rows,
# so a common word costs no join per match. CROSS JOIN pins that loop order. There
# is no outer ORDER BY: sorting the joined rows again, text included, in a second
# temporary B-tree cost about a tenth of a small index's whole search, so ``search``
# orders the at most ``limit`` rows itself, by the same (rank, id).
_TOP_THEN_JOIN = """
SELECT c.id, c.document_id, c.text, c.page, d.title, col.name, d.source_url, -m.rank
FROM (
    SELECT rowid, bm25(library_chunk_fts) AS rank FROM library_chunk_fts
    WHERE library_chunk_fts MATCH %s ORDER BY rank, rowid LIMIT %s
) AS m
CROSS JOIN library_chunk c ON c.id = m.rowid
CROSS JOIN library_document d ON d.id = c.document_id
CROSS JOIN library_collection col ON col.id = d.collection_id
"""
_CHUNK_ID = itemgetter(0)
_SCORE = itemgetter(7)

# Limited to collections: the filter must apply before the limit.
_JOIN_THEN_TOP = """
SELECT c.id, c.document_id, c.text, c.page, d.title, col.name, d.source_url, -m.rank
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
    if collection_names is None:
        # Rank ascending is score descending; a stable sort by id first keeps ties by id.
        rows.sort(key=_CHUNK_ID)
        rows.sort(key=_SCORE, reverse=True)
    return list(map(ChunkHit._make, rows))
