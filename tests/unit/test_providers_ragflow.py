"""RAGFlow knowledge_search: chunk mapping, titles, pages, native locators, errors (synthetic payloads)."""

from __future__ import annotations

import json
from dataclasses import replace

import httpx
import pytest

from knowledgeweb.knowledge import format_result, read_sources
from knowledgeweb.knowledge.types import RetrievalResult
from knowledgeweb.providers.errors import (
    MalformedResponseError,
    ProviderAuthError,
    ProviderHTTPError,
    ProviderRejectedError,
    UnsupportedToolError,
)
from knowledgeweb.providers.ragflow import RagflowProvider, ragflow_connection
from knowledgeweb.providers.ragflow.chunks import pages_from_positions
from tests.synthetic import (
    RAGFLOW_KEY,
    RAGFLOW_URL,
    Upstream,
    ragflow_routes,
    synthetic_ragflow_chunk,
    synthetic_ragflow_dataset,
    synthetic_ragflow_datasets,
    synthetic_ragflow_error,
    synthetic_ragflow_retrieval,
)


def provider(upstream: Upstream) -> RagflowProvider:
    connection = ragflow_connection(base_url=RAGFLOW_URL, api_key=RAGFLOW_KEY, timeout=5)
    return RagflowProvider(connection=replace(connection, transport=upstream.transport))


def search(upstream: Upstream, query: str = "how long is the warranty?", top_k: int = 20) -> RetrievalResult:
    return provider(upstream).search(query, tool="knowledge_search", top_k=top_k)


def test_it_maps_a_chunk_to_a_titled_hit_with_dataset_name_page_and_locator() -> None:
    result = search(Upstream(ragflow_routes()))
    (hit,) = result.hits
    assert hit.text == "Synthetic chunk: the warranty lasts two years."
    assert hit.title == "warranty.pdf"
    assert hit.dataset_name == "Product manuals"
    assert hit.page == 3
    assert hit.url is None
    assert hit.score == 0.82
    assert hit.locator is not None
    assert (hit.locator.dataset_id, hit.locator.document_id, hit.locator.chunk_id, hit.locator.pages) == (
        "ds00000000000000000000000000001",
        "doc0000000000000000000000000001",
        "a1b2c3d4e5f60718",
        (3,),
    )
    assert (result.provider, result.tool) == ("ragflow", "knowledge_search")


def test_it_sends_the_documented_retrieval_request_with_the_bearer_key() -> None:
    upstream = Upstream(ragflow_routes())
    search(upstream, top_k=7)
    (body,) = upstream.bodies("/api/v1/retrieval")
    assert body["question"] == "how long is the warranty?"
    assert body["dataset_ids"] == ["ds00000000000000000000000000001"]
    assert body["page_size"] == 7
    assert "document_ids" not in body
    assert all(r.headers["Authorization"] == f"Bearer {RAGFLOW_KEY}" for r in upstream.requests)
    assert upstream.paths() == ["/api/v1/datasets", "/api/v1/retrieval"]


def test_the_page_size_never_exceeds_one_hundred() -> None:
    upstream = Upstream(ragflow_routes())
    search(upstream, top_k=500)
    assert upstream.bodies("/api/v1/retrieval")[0]["page_size"] == 100


def test_the_title_falls_back_to_doc_aggs_for_the_same_document() -> None:
    chunk = synthetic_ragflow_chunk(document_keyword="")
    retrieval = synthetic_ragflow_retrieval(
        [chunk], doc_aggs=[{"doc_name": "from-aggs.pdf", "doc_id": chunk["document_id"], "count": 1}]
    )
    (hit,) = search(Upstream(ragflow_routes(retrieval=retrieval))).hits
    assert hit.title == "from-aggs.pdf"


def test_doc_aggs_as_an_empty_dict_leaves_an_untitled_hit_unattributed() -> None:
    chunk = synthetic_ragflow_chunk()
    del chunk["document_keyword"]
    retrieval = synthetic_ragflow_retrieval([chunk], doc_aggs={})
    result = search(Upstream(ragflow_routes(retrieval=retrieval)))
    assert result.hits[0].title is None
    content, artifact = format_result(result)
    assert "Unattributed text" in content
    assert artifact == {"knowledge_sources_version": 1, "knowledge_sources": []}


def test_doc_aggs_of_another_document_is_not_used_as_a_title() -> None:
    chunk = synthetic_ragflow_chunk(document_keyword=None)
    retrieval = synthetic_ragflow_retrieval(
        [chunk], doc_aggs=[{"doc_name": "other.pdf", "doc_id": "someotherdoc", "count": 3}]
    )
    assert search(Upstream(ragflow_routes(retrieval=retrieval))).hits[0].title is None


@pytest.mark.parametrize(
    "positions",
    [[], [""], [[""]], [[0, 1, 2, 3, 4]], [["3", 1, 2, 3, 4]], [[3, 1, 2]], [[True, 1, 2, 3, 4]], "3", None],
)
def test_pages_come_only_from_real_positions(positions: object) -> None:
    assert pages_from_positions(positions) == ()


def test_real_positions_give_distinct_pages_in_order() -> None:
    assert pages_from_positions([[4, 0, 1, 2, 3], [2.0, 0, 1, 2, 3], [4, 5, 6, 7, 8], [""]]) == (4, 2)


def test_a_chunk_with_junk_positions_has_no_page() -> None:
    retrieval = synthetic_ragflow_retrieval([synthetic_ragflow_chunk(positions=[""])])
    (hit,) = search(Upstream(ragflow_routes(retrieval=retrieval))).hits
    assert hit.page is None
    assert hit.locator is not None
    assert hit.locator.pages == ()


def test_complete_locators_give_the_native_snapshot() -> None:
    second = synthetic_ragflow_chunk(
        id="ffeeddccbbaa9988", content="Synthetic: returns within 30 days.", positions=[]
    )
    result = search(
        Upstream(ragflow_routes(retrieval=synthetic_ragflow_retrieval([synthetic_ragflow_chunk(), second])))
    )
    content, artifact = format_result(result)
    snapshot = artifact["knowledge_sources"]
    assert snapshot["version"] == 1
    assert [s["chunk_id"] for s in snapshot["sources"]] == ["a1b2c3d4e5f60718", "ffeeddccbbaa9988"]
    assert snapshot["sources"][0]["pages"] == [3]
    assert snapshot["sources"][1]["pages"] == []
    assert len(read_sources("knowledge_search", content, artifact)) == 2


def test_one_chunk_without_a_locator_gives_the_shared_form_for_all() -> None:
    partial = synthetic_ragflow_chunk(id="ffeeddccbbaa9988", content="Synthetic: second.", dataset_id="")
    result = search(
        Upstream(ragflow_routes(retrieval=synthetic_ragflow_retrieval([synthetic_ragflow_chunk(), partial])))
    )
    assert result.hits[1].locator is None
    content, artifact = format_result(result)
    assert artifact["knowledge_sources_version"] == 1
    sources = read_sources("knowledge_search", content, artifact)
    assert sorted(e.title for e in sources.values()) == ["warranty.pdf", "warranty.pdf"]
    assert all(e.url is None for e in sources.values())


def test_chunks_without_text_are_skipped() -> None:
    retrieval = synthetic_ragflow_retrieval(
        [synthetic_ragflow_chunk(content="  \n "), synthetic_ragflow_chunk(content=None)]
    )
    assert search(Upstream(ragflow_routes(retrieval=retrieval))).hits == ()


def test_content_is_normalized_without_changing_words() -> None:
    retrieval = synthetic_ragflow_retrieval(
        [synthetic_ragflow_chunk(content="\r\n  Line one\r\n\r\n\r\n\r\nLine two  \n")]
    )
    assert search(Upstream(ragflow_routes(retrieval=retrieval))).hits[0].text == "Line one\n\nLine two"


def test_dataset_names_resolve_from_every_page_of_the_dataset_list() -> None:
    first_page = [synthetic_ragflow_dataset(id=f"ds{i:030d}", name=f"Set {i}") for i in range(100)]
    last = synthetic_ragflow_dataset(id="dslast", name="Last set")
    chunk = synthetic_ragflow_chunk(dataset_id="dslast")

    def datasets(request: httpx.Request) -> httpx.Response:
        page = int(request.url.params["page"])
        assert request.url.params["page_size"] == "100"
        return httpx.Response(200, json=synthetic_ragflow_datasets(first_page if page == 1 else [last]))

    upstream = Upstream(
        lambda request: (
            datasets(request)
            if request.url.path == "/api/v1/datasets"
            else httpx.Response(200, json=synthetic_ragflow_retrieval([chunk]))
        )
    )
    (hit,) = search(upstream).hits
    assert hit.dataset_name == "Last set"
    assert len(upstream.bodies("/api/v1/retrieval")[0]["dataset_ids"]) == 101


def test_datasets_with_different_embedding_models_are_searched_separately_and_merged_by_similarity() -> None:
    datasets = synthetic_ragflow_datasets(
        [
            synthetic_ragflow_dataset(id="dsA", name="A", embedding_model="model-a"),
            synthetic_ragflow_dataset(id="dsB", name="B", embedding_model="model-b"),
        ]
    )

    def retrieval(request: httpx.Request) -> httpx.Response:
        (dataset_id,) = json.loads(request.content)["dataset_ids"]
        score = 0.4 if dataset_id == "dsA" else 0.9
        chunk = synthetic_ragflow_chunk(
            dataset_id=dataset_id, content=f"Synthetic from {dataset_id}", similarity=score
        )
        return httpx.Response(200, json=synthetic_ragflow_retrieval([chunk]))

    upstream = Upstream(ragflow_routes(retrieval=retrieval, datasets=datasets))
    result = search(upstream)
    assert [b["dataset_ids"] for b in upstream.bodies("/api/v1/retrieval")] == [["dsA"], ["dsB"]]
    assert [hit.dataset_name for hit in result.hits] == ["B", "A"]


def test_no_visible_dataset_means_no_retrieval_and_no_hits() -> None:
    upstream = Upstream(ragflow_routes(datasets=synthetic_ragflow_datasets([])))
    assert search(upstream).hits == ()
    assert upstream.paths() == ["/api/v1/datasets"]


def test_it_offers_only_knowledge_search() -> None:
    upstream = Upstream(ragflow_routes())
    with pytest.raises(UnsupportedToolError, match="RAGFlow offers only knowledge_search"):
        provider(upstream).search("q", tool="entity_relations_search")
    assert upstream.requests == []
    (capability,) = provider(upstream).capabilities()
    assert capability.tool == "knowledge_search"
    assert {"search", "sources"} <= set(capability.operations)


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (200, {"code": 109, "data": False, "message": "Authentication error: API key is invalid!"}),
        (401, {"code": 109, "data": False, "message": "Authentication error: API key is invalid!"}),
        (401, {"code": 401, "data": None, "message": "<Unauthorized '401: Unauthorized'>"}),
        (200, {"code": 401, "data": None, "message": "<Unauthorized '401: Unauthorized'>"}),
        (401, None),
    ],
)
def test_every_documented_bad_key_answer_is_an_authentication_failure(status: int, body: object) -> None:
    answer = httpx.Response(status, json=body) if body is not None else httpx.Response(status, content=b"")
    upstream = Upstream(lambda request: answer)
    with pytest.raises(ProviderAuthError, match="RAGFlow rejected the API key"):
        search(upstream)
    assert upstream.paths() == ["/api/v1/datasets"]


def test_code_102_with_http_200_is_a_clear_refusal() -> None:
    retrieval = synthetic_ragflow_error(102, "No chunk found! Check the chunk status please!")
    with pytest.raises(
        ProviderRejectedError, match=r"refused the retrieval request \(code 102\): No chunk found!"
    ):
        search(Upstream(ragflow_routes(retrieval=retrieval)))


def test_code_100_with_a_python_repr_is_reported_as_sent() -> None:
    retrieval = synthetic_ragflow_error(100, "KeyError('text')")
    with pytest.raises(ProviderRejectedError, match=r"\(code 100\): KeyError\('text'\)"):
        search(Upstream(ragflow_routes(retrieval=retrieval)))


def test_http_500_is_a_clear_error() -> None:
    upstream = Upstream(
        ragflow_routes(retrieval=lambda request: httpx.Response(500, content=b"<html>oops</html>"))
    )
    with pytest.raises(ProviderHTTPError, match=r"RAGFlow answered HTTP 500\."):
        search(upstream)


@pytest.mark.parametrize(
    "retrieval",
    [
        {"data": {"chunks": []}},
        {"code": "0", "data": {}},
        {"code": 0, "data": []},
        {"code": 0, "data": {"chunks": {}}},
    ],
)
def test_answers_without_the_documented_shape_are_malformed(retrieval: dict[str, object]) -> None:
    with pytest.raises(MalformedResponseError):
        search(Upstream(ragflow_routes(retrieval=retrieval)))


def test_a_dataset_list_that_is_not_a_list_is_malformed() -> None:
    with pytest.raises(MalformedResponseError, match="dataset list is not a list"):
        search(Upstream(ragflow_routes(datasets={"code": 0, "data": {"id": "x"}})))


def test_an_echoed_key_never_reaches_a_hit() -> None:
    chunk = synthetic_ragflow_chunk(
        content=f"Synthetic echo of {RAGFLOW_KEY}", document_keyword=f"{RAGFLOW_KEY}.pdf"
    )
    (hit,) = search(Upstream(ragflow_routes(retrieval=synthetic_ragflow_retrieval([chunk])))).hits
    assert RAGFLOW_KEY not in hit.text
    assert RAGFLOW_KEY not in (hit.title or "")
    assert "[redacted]" in hit.text


@pytest.mark.parametrize(
    "partial",
    [
        # Locators complete, but the dataset is not in the dataset list: no dataset name.
        {"dataset_id": "dsNotListed"},
        # Locators complete, but no title from document_keyword nor doc_aggs.
        {"document_keyword": "", "document_id": "docWithoutAggs"},
    ],
)
def test_a_chunk_without_both_names_gives_the_shared_form_for_all(partial: dict[str, str]) -> None:
    second = synthetic_ragflow_chunk(id="ffeeddccbbaa9988", content="Synthetic: second.", **partial)
    retrieval = synthetic_ragflow_retrieval(
        [synthetic_ragflow_chunk(), second],
        doc_aggs=[{"doc_name": "warranty.pdf", "doc_id": "doc0000000000000000000000000001", "count": 1}],
    )
    result = search(Upstream(ragflow_routes(retrieval=retrieval)))
    assert result.hits[1].locator is not None
    content, artifact = format_result(result)
    assert artifact["knowledge_sources_version"] == 1
    assert isinstance(artifact["knowledge_sources"], list)
    assert all(e.form == "shared" for e in read_sources("knowledge_search", content, artifact).values())
