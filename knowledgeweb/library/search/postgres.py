"""PostgreSQL backend over the GIN-indexed ``to_tsvector('english', text)``.

``ts_rank`` alone knows nothing of how rare a word is, so a question's common
words would outrank its telling ones. Each term's ``ts_rank`` is therefore
weighted by the same inverse document frequency FTS5's ``bm25()`` uses
(``ln((N - n + 0.5) / (n + 0.5))``, floored at 1e-6), which keeps the ranking
close to SQLite's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection

from knowledgeweb.library.search.hits import ChunkHit

# Every ``to_tsvector('english'::regconfig, c.text)`` below must match the indexed
# expression of migration 0002 exactly, or the index is not used.


def websearch_expression(terms: Sequence[str]) -> str:
    """Input for ``websearch_to_tsquery`` that matches any term.

    Terms are plain letters and digits (see ``terms.search_terms``) and never the
    words ``or``/``and``/``not`` (stop words), so nothing here is read as syntax.
    """
    return " or ".join(terms)


def search(terms: Sequence[str], *, limit: int, collection_names: Sequence[str] | None) -> list[ChunkHit]:
    sql = [
        "WITH term AS (",
        "    SELECT plainto_tsquery('english'::regconfig, t) AS q FROM unnest(%s::text[]) AS t",
        "), weighted AS (",
        "    SELECT term.q, GREATEST(ln((total.n - m.n + 0.5) / (m.n + 0.5)), 1e-6) AS idf",
        "    FROM term",
        "    CROSS JOIN (SELECT count(*) AS n FROM library_chunk) AS total",
        "    CROSS JOIN LATERAL (",
        "        SELECT count(*) AS n FROM library_chunk c",
        "        WHERE to_tsvector('english'::regconfig, c.text) @@ term.q",
        "    ) AS m",
        "    WHERE numnode(term.q) > 0",
        ")",
        "SELECT c.id, c.document_id, c.text, c.page, d.title, col.name, d.source_url,",
        "       (SELECT sum(w.idf * ts_rank(to_tsvector('english'::regconfig, c.text), w.q, 1))",
        "        FROM weighted w) AS rank",
        "FROM library_chunk c",
        "JOIN library_document d ON d.id = c.document_id",
        "JOIN library_collection col ON col.id = d.collection_id",
        "WHERE to_tsvector('english'::regconfig, c.text) @@ websearch_to_tsquery('english'::regconfig, %s)",
    ]
    params: list[Any] = [list(terms), websearch_expression(terms)]
    if collection_names is not None:
        sql.append("AND col.name = ANY(%s)")
        params.append(list(collection_names))
    sql.append("ORDER BY rank DESC, c.id LIMIT %s")
    params.append(limit)
    with connection.cursor() as cursor:
        cursor.execute("\n".join(sql), params)
        rows = cursor.fetchall()
    return [ChunkHit.from_row(row, score=float(row[7])) for row in rows]
