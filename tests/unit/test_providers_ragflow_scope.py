"""RAGFlow document-scope validation: batches of 100, at most 4 in flight, all-or-nothing."""

from __future__ import annotations

import threading
from dataclasses import replace

import httpx
import pytest

from knowledgeweb.providers.errors import ProviderAuthError, ScopeRejectedError
from knowledgeweb.providers.ragflow import DatasetSelection, RagflowProvider, ragflow_connection
from knowledgeweb.providers.ragflow.documents import BATCH_SIZE
from tests.synthetic import (
    RAGFLOW_KEY,
    RAGFLOW_URL,
    Handler,
    Upstream,
    ragflow_routes,
    synthetic_ragflow_dataset,
    synthetic_ragflow_datasets,
    synthetic_ragflow_document,
    synthetic_ragflow_documents,
    synthetic_ragflow_error,
)

DATASETS = synthetic_ragflow_datasets(
    [synthetic_ragflow_dataset(id="dsA", name="A"), synthetic_ragflow_dataset(id="dsB", name="B")]
)


def provider(upstream: Upstream, selection: list[DatasetSelection]) -> RagflowProvider:
    connection = ragflow_connection(base_url=RAGFLOW_URL, api_key=RAGFLOW_KEY, timeout=5)
    return RagflowProvider(connection=replace(connection, transport=upstream.transport), selection=selection)


def doc_ids(prefix: str, count: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{i:04d}" for i in range(count))


def dataset_of(request: httpx.Request) -> str:
    return request.url.path.split("/")[4]


def all_searchable(request: httpx.Request) -> httpx.Response:
    ids = request.url.params.get_list("ids")
    return httpx.Response(
        200,
        json=synthetic_ragflow_documents(
            [synthetic_ragflow_document(i, dataset_of(request)) for i in reversed(ids)]
        ),
    )


class InFlight:
    """Counts concurrent document checks.

    The first ``gate`` checks wait for each other at a barrier (which breaks if
    fewer than ``gate`` can run at once), then give a surplus check the chance to
    start beside them before they finish (so a pool larger than ``gate`` shows up
    in ``most``).
    """

    def __init__(self, answer: object, gate: int = 4) -> None:
        self.answer = answer
        self.now = 0
        self.most = 0
        self.seen = 0
        self.lock = threading.Lock()
        self.barrier = threading.Barrier(gate, timeout=10)
        self.surplus = threading.Event()
        self.gate = gate

    def __call__(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            self.now += 1
            self.seen += 1
            self.most = max(self.most, self.now)
            first_wave = self.seen <= self.gate
            if self.seen == self.gate + 1:
                self.surplus.set()
        try:
            if first_wave:
                self.barrier.wait()
                self.surplus.wait(timeout=0.2)
            return self.answer(request)  # type: ignore[operator]
        finally:
            with self.lock:
                self.now -= 1


def test_a_selection_of_1001_documents_is_rejected_before_any_request() -> None:
    upstream = Upstream(ragflow_routes(datasets=DATASETS, documents=all_searchable))
    selection = [DatasetSelection("dsA", doc_ids("a", 600)), DatasetSelection("dsB", doc_ids("b", 401))]
    with pytest.raises(ScopeRejectedError, match="1001 documents are selected; at most 1000"):
        provider(upstream, selection).search("q")
    assert upstream.requests == []


def test_1000_documents_are_checked_in_batches_of_100_and_searched_in_input_order() -> None:
    gauge = InFlight(all_searchable)
    upstream = Upstream(ragflow_routes(datasets=DATASETS, documents=gauge))
    selection = [DatasetSelection("dsA", doc_ids("a", 950)), DatasetSelection("dsB", doc_ids("b", 50))]
    provider(upstream, selection).search("q")
    checks = [r for r in upstream.requests if r.url.path.endswith("/documents")]
    assert len(checks) == 11
    assert all(len(r.url.params.get_list("ids")) <= BATCH_SIZE for r in checks)
    assert sorted(i for r in checks for i in r.url.params.get_list("ids")) == sorted(
        doc_ids("a", 950) + doc_ids("b", 50)
    )
    assert all(r.url.params["page_size"] == str(len(r.url.params.get_list("ids"))) for r in checks)
    assert gauge.most == 4  # docs/providers.md: at most 4 batches in flight
    (body,) = upstream.bodies("/api/v1/retrieval")
    assert body["dataset_ids"] == ["dsA", "dsB"]
    assert body["document_ids"] == list(doc_ids("a", 950) + doc_ids("b", 50))


def test_one_bad_batch_among_eleven_rejects_the_whole_scope() -> None:
    bad_id = "a0512"  # lands in batch 6

    def answer(request: httpx.Request) -> httpx.Response:
        ids = [i for i in request.url.params.get_list("ids") if i != bad_id]
        docs = [synthetic_ragflow_document(i, dataset_of(request)) for i in ids]
        return httpx.Response(200, json=synthetic_ragflow_documents(docs))

    gauge = InFlight(answer)
    upstream = Upstream(ragflow_routes(datasets=DATASETS, documents=gauge))
    selection = [DatasetSelection("dsA", doc_ids("a", 950)), DatasetSelection("dsB", doc_ids("b", 50))]
    with pytest.raises(ScopeRejectedError, match=r"rejected: document a0512 was not found in dataset dsA"):
        provider(upstream, selection).search("q")
    assert gauge.most == 4  # docs/providers.md: at most 4 batches in flight
    assert "/api/v1/retrieval" not in upstream.paths()


@pytest.mark.parametrize(
    ("overrides", "shown"),
    [
        ({"run": "RUNNING"}, "run='RUNNING'"),
        ({"run": "FAIL"}, "run='FAIL'"),
        ({"status": "0"}, "status='0'"),
        ({"chunk_count": 0}, "chunk_count=0"),
        ({"chunk_count": "4"}, "chunk_count='4'"),
    ],
)
def test_a_document_that_is_not_searchable_rejects_the_scope(
    overrides: dict[str, object], shown: str
) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        ids = request.url.params.get_list("ids")
        docs = [synthetic_ragflow_document(i, "dsA", **(overrides if i == "a0001" else {})) for i in ids]
        return httpx.Response(200, json=synthetic_ragflow_documents(docs))

    upstream = Upstream(ragflow_routes(datasets=DATASETS, documents=answer))
    with pytest.raises(
        ScopeRejectedError, match=rf"document a0001 in dataset dsA is not searchable \(.*{shown}"
    ):
        provider(upstream, [DatasetSelection("dsA", doc_ids("a", 3))]).search("q")
    assert "/api/v1/retrieval" not in upstream.paths()


def test_a_batch_error_code_rejects_the_scope_and_names_the_batch() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=synthetic_ragflow_error(102, "You don't own the document a0000."))

    upstream = Upstream(ragflow_routes(datasets=DATASETS, documents=answer))
    with pytest.raises(ScopeRejectedError, match=r"batch 1 of 1 \(dataset dsA\) failed: .*code 102"):
        provider(upstream, [DatasetSelection("dsA", doc_ids("a", 2))]).search("q")
    assert "/api/v1/retrieval" not in upstream.paths()


def test_a_batch_server_error_rejects_the_scope() -> None:
    upstream = Upstream(ragflow_routes(datasets=DATASETS, documents=lambda r: httpx.Response(500)))
    with pytest.raises(ScopeRejectedError, match="HTTP 500"):
        provider(upstream, [DatasetSelection("dsA", doc_ids("a", 2))]).search("q")
    assert "/api/v1/retrieval" not in upstream.paths()


def test_a_bad_key_during_document_checks_stays_an_authentication_error() -> None:
    upstream = Upstream(
        ragflow_routes(
            datasets=DATASETS,
            documents=lambda r: httpx.Response(
                401, json={"code": 401, "data": None, "message": "Unauthorized"}
            ),
        )
    )
    with pytest.raises(ProviderAuthError):
        provider(upstream, [DatasetSelection("dsA", doc_ids("a", 2))]).search("q")


def test_a_selected_dataset_the_key_cannot_see_is_rejected_before_document_checks() -> None:
    upstream = Upstream(ragflow_routes(datasets=DATASETS, documents=all_searchable))
    with pytest.raises(ScopeRejectedError, match="dataset dsZ is not visible to this binding's API key"):
        provider(upstream, [DatasetSelection("dsZ", doc_ids("z", 2))]).search("q")
    assert upstream.paths() == ["/api/v1/datasets"]


def test_whole_and_narrowed_datasets_are_searched_in_separate_calls() -> None:
    upstream = Upstream(ragflow_routes(datasets=DATASETS, documents=all_searchable))
    provider(upstream, [DatasetSelection("dsA"), DatasetSelection("dsB", ("b0001",))]).search("q")
    bodies = upstream.bodies("/api/v1/retrieval")
    assert [(b["dataset_ids"], b.get("document_ids")) for b in bodies] == [
        (["dsA"], None),
        (["dsB"], ["b0001"]),
    ]


def test_a_selection_of_whole_datasets_needs_no_document_checks() -> None:
    upstream = Upstream(ragflow_routes(datasets=DATASETS))
    provider(upstream, [DatasetSelection("dsB")]).search("q")
    assert upstream.paths() == ["/api/v1/datasets", "/api/v1/retrieval"]
    assert upstream.bodies("/api/v1/retrieval")[0]["dataset_ids"] == ["dsB"]


@pytest.mark.parametrize(
    ("selection", "message"),
    [
        ([], "Select at least one dataset"),
        ([DatasetSelection("../etc")], "not a valid RAGFlow dataset id"),
        ([DatasetSelection("dsA", ("a/b",))], "not a valid RAGFlow document id"),
        ([DatasetSelection("dsA"), DatasetSelection("dsA")], "selected more than once"),
        ([DatasetSelection("dsA", ("x", "x"))], "Document x is selected more than once"),
    ],
)
def test_a_malformed_selection_is_rejected_before_any_request(
    selection: list[DatasetSelection], message: str
) -> None:
    upstream = Upstream(ragflow_routes(datasets=DATASETS, documents=all_searchable))
    with pytest.raises(ScopeRejectedError, match=message):
        provider(upstream, selection).search("q")
    assert upstream.requests == []


def before_v026(stored: dict[str, dict[str, object]]) -> Handler:
    """A synthetic RAGFlow older than v0.26: ``ids`` is ignored (the first page is listed),
    a single ``id`` filters, and an unknown ``id`` is code 102."""

    def answer(request: httpx.Request) -> httpx.Response:
        document_id = request.url.params.get("id")
        if document_id is None:
            size = int(request.url.params["page_size"])
            return httpx.Response(200, json=synthetic_ragflow_documents(list(stored.values())[:size]))
        if document_id not in stored:
            return httpx.Response(
                200, json=synthetic_ragflow_error(102, f"You don't own the document {document_id}.")
            )
        return httpx.Response(200, json=synthetic_ragflow_documents([stored[document_id]]))

    return answer


def test_a_server_that_ignores_ids_is_checked_one_id_at_a_time() -> None:
    stored = {i: synthetic_ragflow_document(i, "dsA") for i in ("x0", "x1", "x2", "a0000", "a0001")}
    upstream = Upstream(ragflow_routes(datasets=DATASETS, documents=before_v026(stored)))
    provider(upstream, [DatasetSelection("dsA", ("a0001", "a0000"))]).search("q")
    checks = [r.url.params for r in upstream.requests if r.url.path.endswith("/documents")]
    assert [(p.get_list("ids"), p.get("id"), p["page_size"]) for p in checks] == [
        (["a0001", "a0000"], None, "2"),
        ([], "a0001", "1"),
        ([], "a0000", "1"),
    ]
    (body,) = upstream.bodies("/api/v1/retrieval")
    assert body["document_ids"] == ["a0001", "a0000"]


def test_an_unknown_document_on_a_server_that_ignores_ids_rejects_the_scope() -> None:
    stored = {i: synthetic_ragflow_document(i, "dsA") for i in ("x0", "x1", "a0000")}
    upstream = Upstream(ragflow_routes(datasets=DATASETS, documents=before_v026(stored)))
    with pytest.raises(
        ScopeRejectedError, match=r"batch 1 of 1 \(dataset dsA\) failed: .*code 102.*document a0009"
    ):
        provider(upstream, [DatasetSelection("dsA", ("a0000", "a0009"))]).search("q")
    assert "/api/v1/retrieval" not in upstream.paths()


def test_a_non_searchable_document_on_a_server_that_ignores_ids_rejects_the_scope() -> None:
    stored = {
        "x0": synthetic_ragflow_document("x0", "dsA"),
        "a0000": synthetic_ragflow_document("a0000", "dsA", run="UNSTART", chunk_count=0),
    }
    upstream = Upstream(ragflow_routes(datasets=DATASETS, documents=before_v026(stored)))
    with pytest.raises(
        ScopeRejectedError, match=r"document a0000 in dataset dsA is not searchable \(run='UNSTART'"
    ):
        provider(upstream, [DatasetSelection("dsA", ("a0000",))]).search("q")
    assert "/api/v1/retrieval" not in upstream.paths()
