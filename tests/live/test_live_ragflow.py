"""Live RAGFlow: every citation matches the chunk the server really returned, with its real names."""

from __future__ import annotations

from typing import Any

import pytest

from knowledgeweb.knowledge import format_result, read_sources
from knowledgeweb.knowledge.bounds import TRUNCATION_MARK
from knowledgeweb.providers.ragflow import RagflowProvider, ragflow_connection
from knowledgeweb.providers.ragflow.chunks import normalized_content, titles_from_doc_aggs
from tests.live.conftest import RecordingTransport, live_settings

pytestmark = pytest.mark.live


def test_every_citation_is_a_real_returned_chunk_with_its_real_title_and_dataset(
    recording: RecordingTransport,
) -> None:
    url, key, query = live_settings("ragflow")
    adapter = RagflowProvider(connection=ragflow_connection(base_url=url, api_key=key, timeout=120))
    result = adapter.search(query, tool="knowledge_search", top_k=10)
    content, artifact = format_result(result)
    sources = read_sources("knowledge_search", content, artifact)
    assert sources, "no attributable hits: set KNOWLEDGEWEB_LIVE_RAGFLOW_QUERY to match indexed documents"

    datasets = {d["id"]: d["name"] for page in recording.bodies("/api/v1/datasets") for d in page["data"]}
    returned: list[dict[str, Any]] = []
    titles: dict[str, str] = {}
    for body in recording.bodies("/api/v1/retrieval"):
        returned.extend(body["data"]["chunks"])
        titles.update(titles_from_doc_aggs(body["data"].get("doc_aggs")))

    for evidence in sources.values():
        excerpt = (
            evidence.excerpt.removesuffix(TRUNCATION_MARK).rstrip()
            if evidence.truncated
            else evidence.excerpt
        )
        matches = [
            chunk
            for chunk in returned
            if (normalized_content(chunk.get("content")).startswith(excerpt) if evidence.truncated
                else normalized_content(chunk.get("content")) == excerpt)
            and (chunk.get("document_keyword") or titles.get(chunk.get("document_id", ""))) == evidence.title
        ]  # fmt: skip
        assert matches, f"citation {evidence.handle} quotes no returned chunk"
        chunk = matches[0]
        assert evidence.url is None
        if evidence.dataset_name is not None:
            assert evidence.dataset_name == datasets[chunk["dataset_id"]]
        if evidence.form == "native":
            assert evidence.locators["chunk_id"] == chunk["id"]
            assert evidence.locators["document_id"] == chunk["document_id"]
        real_pages = {p[0] for p in chunk.get("positions") or [] if isinstance(p, list) and len(p) == 5}
        assert set(evidence.pages) <= real_pages
