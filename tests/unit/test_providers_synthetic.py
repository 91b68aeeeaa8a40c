"""The synthetic payload builders in ``tests/synthetic.py`` follow docs/providers.md field by field."""

from __future__ import annotations

from tests.synthetic import (
    synthetic_lightrag_chunk,
    synthetic_lightrag_entity,
    synthetic_lightrag_no_results,
    synthetic_lightrag_relationship,
    synthetic_lightrag_success,
    synthetic_ragflow_chunk,
    synthetic_ragflow_dataset,
    synthetic_ragflow_documents,
    synthetic_ragflow_retrieval,
)


def test_the_synthetic_ragflow_chunk_has_exactly_the_documented_fields() -> None:
    assert set(synthetic_ragflow_chunk()) == {
        "id", "content", "document_id", "document_keyword", "dataset_id", "similarity",
        "vector_similarity", "term_similarity", "positions", "important_keywords", "image_id",
        "content_ltks", "doc_type_kwd", "mom_id", "tag_kwd", "row_id",
    }  # fmt: skip
    assert "document_name" not in synthetic_ragflow_chunk()
    assert len(synthetic_ragflow_chunk()["id"]) == 16


def test_the_synthetic_ragflow_bodies_follow_the_documented_envelopes() -> None:
    retrieval = synthetic_ragflow_retrieval([synthetic_ragflow_chunk()])
    assert retrieval["code"] == 0
    assert set(retrieval["data"]) == {"chunks", "doc_aggs", "total"}
    assert set(retrieval["data"]["doc_aggs"][0]) == {"doc_name", "doc_id", "count"}
    assert set(synthetic_ragflow_documents([])["data"]) == {"total", "docs"}
    assert synthetic_ragflow_dataset()["status"] == "1"


def test_the_synthetic_lightrag_body_follows_the_documented_envelope() -> None:
    body = synthetic_lightrag_success(chunks=[synthetic_lightrag_chunk("doc-1-chunk-000", "text")])
    assert set(body) == {"status", "message", "data", "metadata"}
    assert set(body["data"]) == {"entities", "relationships", "chunks", "references"}
    assert body["data"]["references"] == [{"reference_id": "1", "file_path": "acme.txt"}]
    assert set(synthetic_lightrag_entity("A", "d", "c")) == {
        "entity_name", "entity_type", "description", "source_id", "file_path", "created_at",
    }  # fmt: skip
    assert set(synthetic_lightrag_relationship("A", "B", "d", "c")) == {
        "src_id", "tgt_id", "description", "keywords", "weight", "source_id", "file_path", "created_at",
    }  # fmt: skip
    assert synthetic_lightrag_no_results()["metadata"]["failure_reason"] == "no_results"
    assert synthetic_lightrag_no_results("naive")["message"] == "No relevant document chunks found."


def test_synthetic_doc_aggs_collapse_by_name_and_sort_by_count() -> None:
    chunks = [
        synthetic_ragflow_chunk(id="0000000000000001", document_keyword="a.pdf", document_id="docA"),
        synthetic_ragflow_chunk(id="0000000000000002", document_keyword="b.pdf", document_id="docB"),
        synthetic_ragflow_chunk(id="0000000000000003", document_keyword="b.pdf", document_id="docB2"),
    ]
    assert synthetic_ragflow_retrieval(chunks)["data"]["doc_aggs"] == [
        {"doc_name": "b.pdf", "doc_id": "docB", "count": 2},
        {"doc_name": "a.pdf", "doc_id": "docA", "count": 1},
    ]


def test_synthetic_references_are_numbered_by_frequency_and_match_the_chunks() -> None:
    body = synthetic_lightrag_success(
        chunks=[
            synthetic_lightrag_chunk("doc-1-chunk-000", "one", "rare.txt"),
            synthetic_lightrag_chunk("doc-2-chunk-000", "two", "often.txt"),
            synthetic_lightrag_chunk("doc-2-chunk-001", "three", "often.txt"),
            synthetic_lightrag_chunk("doc-3-chunk-000", "four", "unknown_source"),
        ]
    )
    assert body["data"]["references"] == [
        {"reference_id": "1", "file_path": "often.txt"},
        {"reference_id": "2", "file_path": "rare.txt"},
    ]
    assert [c["reference_id"] for c in body["data"]["chunks"]] == ["2", "1", "1", ""]
