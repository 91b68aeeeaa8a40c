"""SYNTHETIC provider payloads, shaped exactly after docs/providers.md, and a recording transport.

Nothing here came from a real server: every builder below is labelled synthetic
and mirrors the documented wire shape field by field.
``tests/unit/test_providers_synthetic.py`` pins those shapes, so a builder cannot
drift from the documentation unnoticed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from knowledgeweb.providers.client import transport_override

RAGFLOW_URL = "https://ragflow.example.test"
LIGHTRAG_URL = "https://lightrag.example.test"
#: Synthetic credentials: the leak scans look for these exact values.
RAGFLOW_KEY = "ragflow-SyntheticKey0123456789abcdef"
LIGHTRAG_KEY = "lightrag-synthetic-key-9f8e7d6c5b4a"

Handler = Callable[[httpx.Request], httpx.Response]


class Upstream:
    """A recording ``httpx.MockTransport``: every request is kept, in order."""

    def __init__(self, handler: Handler) -> None:
        self.requests: list[httpx.Request] = []
        self._lock = threading.Lock()
        self._handler = handler
        self.transport = httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            self.requests.append(request)
        return self._handler(request)

    def paths(self) -> list[str]:
        return [request.url.path for request in self.requests]

    def bodies(self, path: str) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests if r.url.path == path]


def routes(table: dict[tuple[str, str], Handler | httpx.Response]) -> Handler:
    """A handler that answers by (method, path); anything else is a synthetic 404."""

    def handle(request: httpx.Request) -> httpx.Response:
        answer = table.get((request.method, request.url.path))
        if answer is None:
            return httpx.Response(404, json={"detail": "Not Found"})
        return answer(request) if callable(answer) else answer

    return handle


def by_host(handlers: dict[str, Handler]) -> Handler:
    """One transport for several synthetic servers, told apart by host name."""

    def handle(request: httpx.Request) -> httpx.Response:
        return handlers[request.url.host](request)

    return handle


# --- RAGFlow (synthetic) ------------------------------------------------------------------


def synthetic_ragflow_chunk(**overrides: Any) -> dict[str, Any]:
    """A synthetic RAGFlow retrieval chunk with every documented field."""
    chunk: dict[str, Any] = {
        "id": "a1b2c3d4e5f60718",
        "content": "Synthetic chunk: the warranty lasts two years.",
        "document_id": "doc0000000000000000000000000001",
        "document_keyword": "warranty.pdf",
        "dataset_id": "ds00000000000000000000000000001",
        "similarity": 0.82,
        "vector_similarity": 0.9,
        "term_similarity": 0.6,
        "positions": [[3, 10.0, 200.0, 50.0, 80.0]],
        "important_keywords": [],
        "image_id": "",
        "content_ltks": "synthetic chunk warranty",
        "doc_type_kwd": "",
        "mom_id": None,
        "tag_kwd": [],
        "row_id": None,
    }
    chunk.update(overrides)
    return chunk


def synthetic_ragflow_retrieval(
    chunks: list[dict[str, Any]], doc_aggs: list[dict[str, Any]] | dict[str, Any] | None = None
) -> dict[str, Any]:
    """A synthetic successful ``POST /api/v1/retrieval`` body.

    ``doc_aggs`` is built as RAGFlow builds it: keyed by document name (two documents
    sharing a name collapse into one entry), counting chunks, sorted by count.
    """
    if doc_aggs is None:
        by_name: dict[str, dict[str, Any]] = {}
        for c in chunks:
            if c.get("document_keyword"):
                entry = by_name.setdefault(
                    c["document_keyword"],
                    {"doc_name": c["document_keyword"], "doc_id": c["document_id"], "count": 0},
                )
                entry["count"] += 1
        doc_aggs = sorted(by_name.values(), key=lambda entry: -entry["count"])
    return {"code": 0, "data": {"chunks": chunks, "doc_aggs": doc_aggs, "total": len(chunks)}}


def synthetic_ragflow_dataset(**overrides: Any) -> dict[str, Any]:
    dataset: dict[str, Any] = {
        "id": "ds00000000000000000000000000001",
        "name": "Product manuals",
        "document_count": 3,
        "chunk_count": 40,
        "embedding_model": "BAAI/bge-m3",
        "status": "1",
    }
    dataset.update(overrides)
    return dataset


def synthetic_ragflow_datasets(datasets: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A synthetic ``GET /api/v1/datasets`` body."""
    return {"code": 0, "data": datasets if datasets is not None else [synthetic_ragflow_dataset()]}


def synthetic_ragflow_document(document_id: str, dataset_id: str, **overrides: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "id": document_id,
        "name": f"{document_id}.pdf",
        "dataset_id": dataset_id,
        "chunk_count": 4,
        "run": "DONE",
        "status": "1",
    }
    document.update(overrides)
    return document


def synthetic_ragflow_documents(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """A synthetic ``GET /api/v1/datasets/{id}/documents`` body."""
    return {"code": 0, "data": {"total": len(docs), "docs": docs}}


def synthetic_ragflow_error(code: int, message: str) -> dict[str, Any]:
    """A synthetic RAGFlow error body (usually served with HTTP 200)."""
    return {"code": code, "message": message}


def ragflow_routes(
    *,
    retrieval: dict[str, Any] | Handler | None = None,
    datasets: dict[str, Any] | None = None,
    documents: Handler | None = None,
) -> Handler:
    """A synthetic RAGFlow server: datasets, optional document checks, retrieval."""
    table: dict[tuple[str, str], Handler | httpx.Response] = {
        ("GET", "/api/v1/datasets"): httpx.Response(
            200, json=datasets if datasets is not None else synthetic_ragflow_datasets()
        ),
        ("POST", "/api/v1/retrieval"): retrieval
        if callable(retrieval)
        else httpx.Response(200, json=retrieval or synthetic_ragflow_retrieval([synthetic_ragflow_chunk()])),
    }
    handle_table = routes(table)

    def handle(request: httpx.Request) -> httpx.Response:
        if documents is not None and request.url.path.endswith("/documents"):
            return documents(request)
        return handle_table(request)

    return handle


# --- LightRAG (synthetic) -----------------------------------------------------------------


def synthetic_lightrag_chunk(
    chunk_id: str, content: str, file_path: str = "acme.txt", reference_id: str = "1"
) -> dict[str, Any]:
    return {"reference_id": reference_id, "content": content, "file_path": file_path, "chunk_id": chunk_id}


def synthetic_lightrag_entity(
    name: str, description: str, source_id: str, **overrides: Any
) -> dict[str, Any]:
    entity: dict[str, Any] = {
        "entity_name": name,
        "entity_type": "organization",
        "description": description,
        "source_id": source_id,
        "file_path": "acme.txt",
        "created_at": 1735689600,
    }
    entity.update(overrides)
    return entity


def synthetic_lightrag_relationship(
    src: str, tgt: str, description: str, source_id: str, **overrides: Any
) -> dict[str, Any]:
    relationship: dict[str, Any] = {
        "src_id": src,
        "tgt_id": tgt,
        "description": description,
        "keywords": "ownership,founding",
        "weight": 1.0,
        "source_id": source_id,
        "file_path": "acme.txt",
        "created_at": 1735689600,
    }
    relationship.update(overrides)
    return relationship


def synthetic_lightrag_success(
    *,
    chunks: list[dict[str, Any]] | None = None,
    references: list[dict[str, Any]] | None = None,
    entities: list[dict[str, Any]] | None = None,
    relationships: list[dict[str, Any]] | None = None,
    mode: str = "mix",
) -> dict[str, Any]:
    """A synthetic successful ``POST /query/data`` body.

    Without explicit ``references`` they are built as LightRAG builds them: numbered
    "1", "2", ... by how often each path appears among the chunks, unknown sources
    left out, and each chunk's ``reference_id`` set to match ("" for unknown sources).
    """
    chunks = chunks or []
    if references is None:
        counts: dict[str, int] = {}
        for chunk in chunks:
            path = chunk.get("file_path")
            if path and path != "unknown_source":
                counts[path] = counts.get(path, 0) + 1
        ranked = sorted(counts, key=lambda path: -counts[path])
        numbers = {path: str(i) for i, path in enumerate(ranked, start=1)}
        references = [{"reference_id": numbers[path], "file_path": path} for path in ranked]
        chunks = [
            {**chunk, "reference_id": numbers.get(chunk["file_path"], "")} if "file_path" in chunk else chunk
            for chunk in chunks
        ]
    entities, relationships = entities or [], relationships or []
    # As the real server reports it (tests/lightrag_real/test_wire.py): naive mode skips the
    # keyword step and the graph, so it counts chunks only.
    if mode == "naive":
        keywords: dict[str, list[str]] = {"high_level": [], "low_level": []}
        processing: dict[str, int] = {"total_chunks_found": len(chunks), "final_chunks_count": len(chunks)}
    else:
        keywords = {"high_level": ["synthetic"], "low_level": ["acme"]}
        processing = {
            "total_entities_found": len(entities),
            "total_relations_found": len(relationships),
            "entities_after_truncation": len(entities),
            "relations_after_truncation": len(relationships),
            "merged_chunks_count": len(chunks),
            "final_chunks_count": len(chunks),
        }
    return {
        "status": "success",
        "message": "Query processed successfully",
        "data": {
            "entities": entities,
            "relationships": relationships,
            "chunks": chunks,
            "references": references,
        },
        "metadata": {"query_mode": mode, "keywords": keywords, "processing_info": processing},
    }


def synthetic_lightrag_no_results(mode: str = "hybrid") -> dict[str, Any]:
    """A synthetic "nothing found" body; naive mode words it differently (checked against 1.5.7)."""
    return {
        "status": "failure",
        "message": "No relevant document chunks found." if mode == "naive" else "Query returned no results",
        "data": {},
        "metadata": {"failure_reason": "no_results", "mode": mode},
    }


def synthetic_lightrag_validation_error(message: str) -> dict[str, Any]:
    return {"status": "failure", "message": f"Validation error: {message}", "data": {}, "metadata": {}}


def lightrag_routes(answer: dict[str, Any] | httpx.Response | Handler) -> Handler:
    """A synthetic LightRAG server answering ``POST /query/data``."""
    if isinstance(answer, dict):
        answer = httpx.Response(200, json=answer)
    return routes({("POST", "/query/data"): answer})


@contextmanager
def serving(
    monkeypatch: pytest.MonkeyPatch, *, ragflow: Handler | None = None, lightrag: Handler | None = None
) -> Iterator[Upstream]:
    """Both synthetic servers behind the client factory, with both keys in the environment."""
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_RAGFLOW", RAGFLOW_KEY)
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_LIGHTRAG", LIGHTRAG_KEY)
    upstream = Upstream(
        by_host(
            {
                "ragflow.example.test": ragflow or ragflow_routes(),
                "lightrag.example.test": lightrag or lightrag_routes(synthetic_lightrag_success()),
            }
        )
    )
    with transport_override(upstream.transport):
        yield upstream
