"""LightRAG ``entity_relations_search``: entities and one-edge paths with their evidence.

The evidence rules (docs/providers.md, seeds/lightrag-entity-relations.md):

- an edge's ``source_id`` is split on ``<SEP>`` and joined to ``chunks[].chunk_id``;
  only those chunks become document hits, so a shared ``file_path`` alone is not evidence;
- each evidence chunk is emitted once, just before the first edge that needs it,
  and every edge names the positions of its evidence, so any prefix of the
  result keeps every shown edge's evidence;
- an edge with no matching chunk keeps an empty ``evidence`` (shown as lacking
  document evidence);
- edge and entity descriptions are unattributed graph facts, never excerpts;
- no multi-hop paths are computed and no completeness is claimed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from knowledgeweb.knowledge.types import RetrievalHit
from knowledgeweb.providers.lightrag.documents import chunk_text, document_hit, reference_paths

SEP = "<SEP>"
#: The contract shows at most 100 hits; a longer result would only be cut later.
MAX_HITS = 100


def relation_hits(data: Mapping[str, Any], *, top_k: int) -> list[RetrievalHit]:
    """Evidence chunks, edges (each after its evidence), then entities."""
    references = reference_paths(data)
    chunks = _chunks_by_id(data.get("chunks", []))
    hits: list[RetrievalHit] = []
    evidence_at: dict[str, int] = {}
    seen_edges: set[tuple[str, str, str]] = set()
    for relationship in data.get("relationships", []):
        if len(seen_edges) >= top_k:
            break
        if not isinstance(relationship, dict):
            continue
        source, target = _name(relationship.get("src_id")), _name(relationship.get("tgt_id"))
        if not source or not target:
            continue
        description = graph_text(relationship.get("description"))
        # LightRAG's graph is undirected: the same edge may come back either way round.
        key = (min(source, target), max(source, target), description)
        if key in seen_edges:
            continue
        seen_edges.add(key)
        positions: list[int] = []
        for chunk_id in split_sep(relationship.get("source_id")):
            chunk = chunks.get(chunk_id)
            if chunk is None:
                continue
            if chunk_id not in evidence_at:
                hit = document_hit(chunk, references)
                if hit is None:
                    continue
                hits.append(hit)
                evidence_at[chunk_id] = len(hits)
            if evidence_at[chunk_id] not in positions:
                positions.append(evidence_at[chunk_id])
        hits.append(
            RetrievalHit(
                kind="relation",
                text=description or _keywords_text(relationship.get("keywords")),
                source_entity=source,
                target_entity=target,
                evidence=tuple(positions),
            )
        )
    hits.extend(_entity_hits(data.get("entities", []), top_k=top_k))
    # A prefix is always safe: edges only point backwards.
    return hits[:MAX_HITS]


def split_sep(value: object) -> list[str]:
    """The distinct, non-blank parts of a ``<SEP>``-joined field, in order."""
    if not isinstance(value, str):
        return []
    parts: list[str] = []
    for part in value.split(SEP):
        part = part.strip()
        if part and part not in parts:
            parts.append(part)
    return parts


def graph_text(value: object) -> str:
    """A merged graph description, one merged part per line."""
    return "\n".join(split_sep(value))


def _chunks_by_id(items: list[Any]) -> dict[str, Mapping[str, Any]]:
    chunks: dict[str, Mapping[str, Any]] = {}
    for chunk in items:
        if not isinstance(chunk, dict):
            continue
        chunk_id = chunk.get("chunk_id")
        if isinstance(chunk_id, str) and chunk_id.strip() and chunk_text(chunk):
            chunks.setdefault(chunk_id.strip(), chunk)
    return chunks


def _entity_hits(items: list[Any], *, top_k: int) -> list[RetrievalHit]:
    hits: list[RetrievalHit] = []
    seen: set[str] = set()
    for entity in items:
        if len(hits) >= top_k:
            break
        if not isinstance(entity, dict):
            continue
        name = _name(entity.get("entity_name"))
        if not name or name in seen:
            continue
        seen.add(name)
        entity_type = _name(entity.get("entity_type"))
        hits.append(
            RetrievalHit(
                kind="entity",
                text=graph_text(entity.get("description"))
                or "(LightRAG returned no description for this entity.)",
                source_entity=name,
                entity_type=entity_type or None,
            )
        )
    return hits


def _keywords_text(value: object) -> str:
    keywords = [word.strip() for word in value.split(",") if word.strip()] if isinstance(value, str) else []
    if keywords:
        return "(No description returned; keywords: " + ", ".join(keywords) + ".)"
    return "(LightRAG returned no description for this relation.)"


def _name(value: object) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""
