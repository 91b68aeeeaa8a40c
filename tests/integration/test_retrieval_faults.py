"""Every provider fault: a clear redacted error, no evidence stored, the credential nowhere.

Synthetic upstream answers (shaped after docs/providers.md) are served through the
client factory's one substitution point, the transport.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.knowledge import RESERVED_KEYS, RetrievalHit, RetrievalResult, read_sources
from knowledgeweb.knowledge.reserved import RECEIPT_KEY
from knowledgeweb.providers.client import MAX_BODY_BYTES, transport_override
from knowledgeweb.retrieval import RetrievalFailedError, retrieval_search, service
from knowledgeweb.threads.models import Message, Thread
from tests.synthetic import (
    LIGHTRAG_KEY,
    LIGHTRAG_URL,
    RAGFLOW_KEY,
    RAGFLOW_URL,
    Handler,
    Upstream,
    lightrag_routes,
    ragflow_routes,
    synthetic_lightrag_chunk,
    synthetic_lightrag_no_results,
    synthetic_lightrag_success,
    synthetic_lightrag_validation_error,
    synthetic_ragflow_chunk,
    synthetic_ragflow_dataset,
    synthetic_ragflow_datasets,
    synthetic_ragflow_document,
    synthetic_ragflow_documents,
    synthetic_ragflow_error,
    synthetic_ragflow_retrieval,
)
from tests.unit.test_providers_ragflow_scope import InFlight

pytestmark = pytest.mark.django_db
KEYS = (RAGFLOW_KEY, LIGHTRAG_KEY)


def timeout(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadTimeout("timed out", request=request)


class Oversized:
    """A 64 MiB streamed body that counts the pieces actually pulled from it."""

    piece = b" " * (1024 * 1024)

    def __init__(self) -> None:
        self.produced = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        def body() -> Iterator[bytes]:
            for _ in range(64):
                self.produced += 1
                yield self.piece

        return httpx.Response(200, content=body())


oversized = Oversized()


def redirect(request: httpx.Request) -> httpx.Response:
    if request.url.host != "ragflow.example.test":
        return httpx.Response(200, json={"code": 0, "data": []})
    return httpx.Response(302, headers={"Location": "https://attacker.example.test/collect"})


def answer(status: int, body: object) -> Handler:
    return lambda request: httpx.Response(status, json=body)


RAGFLOW_FAULTS: list[tuple[str, Handler, str, str]] = [
    ("timeout", ragflow_routes(retrieval=timeout), "RAGFlow sent no complete answer within 30 s, the binding's timeout for the whole search; it ran out while waiting for the response headers of the retrieval request.", "provider_timeout"),
    ("http-500", ragflow_routes(retrieval=answer(500, {"detail": "boom"})), "RAGFlow answered HTTP 500: boom", "provider_server_error"),
    ("http-302", redirect, "RAGFlow answered HTTP 302 (a redirect). Redirects are never followed", "provider_redirect_refused"),
    ("over-4-mib", ragflow_routes(retrieval=oversized), "RAGFlow's response passed the 4 MiB limit; reading stopped there.", "provider_too_large"),
    ("malformed-json", ragflow_routes(retrieval=lambda r: httpx.Response(200, content=b'{"code": 0, "data": {')), "RAGFlow answered with malformed JSON (HTTP 200).", "provider_bad_response"),
    ("code-102", ragflow_routes(retrieval=synthetic_ragflow_error(102, "You don't own the dataset dsX.")), "RAGFlow refused the retrieval request (code 102): You don't own the dataset dsX.", "provider_rejected"),
    ("code-109-http-200", answer(200, {"code": 109, "data": False, "message": "Authentication error: API key is invalid!"}), "RAGFlow rejected the API key (authentication failed): Authentication error: API key is invalid!", "provider_auth"),
    ("code-109-http-401", answer(401, {"code": 109, "data": False, "message": "Authentication error: API key is invalid!"}), "RAGFlow rejected the API key (authentication failed)", "provider_auth"),
    ("code-401-http-200", answer(200, {"code": 401, "data": None, "message": "<Unauthorized '401: Unauthorized'>"}), "RAGFlow rejected the API key (authentication failed): <Unauthorized '401: Unauthorized'>", "provider_auth"),
    ("code-401-http-401", answer(401, {"code": 401, "data": None, "message": "<Unauthorized '401: Unauthorized'>"}), "RAGFlow rejected the API key (authentication failed): <Unauthorized '401: Unauthorized'>", "provider_auth"),
    ("echoed-key", ragflow_routes(retrieval=synthetic_ragflow_error(100, f"KeyError('{RAGFLOW_KEY}') for Authorization: Bearer {RAGFLOW_KEY}")), "RAGFlow refused the retrieval request (code 100): KeyError('[redacted]') for Authorization: [redacted]", "provider_rejected"),
]  # fmt: skip

LIGHTRAG_FAULTS: list[tuple[str, Handler, str, str]] = [
    ("http-403", lightrag_routes(httpx.Response(403, json={"detail": "Invalid API Key"})), "LightRAG rejected the API key (HTTP 403): Invalid API Key", "provider_auth"),
    ("http-400", lightrag_routes(httpx.Response(400, json=synthetic_lightrag_validation_error("mode must be one of local, global"))), "LightRAG rejected the query as invalid: Validation error: mode must be one of local, global", "provider_rejected"),
    ("http-500", lightrag_routes(httpx.Response(500, json={"detail": "Internal server error (error_id: e7)"})), "LightRAG answered HTTP 500: Internal server error (error_id: e7)", "provider_server_error"),
    ("timeout", lightrag_routes(timeout), "LightRAG sent no complete answer within 30 s, the binding's timeout for the whole search; it ran out while waiting for the response headers of the mix query.", "provider_timeout"),
    ("malformed-json", lightrag_routes(httpx.Response(200, content=b"not json")), "LightRAG answered with malformed JSON (HTTP 200).", "provider_bad_response"),
    ("echoed-key", lightrag_routes(httpx.Response(500, json={"detail": f"bad X-API-Key: {LIGHTRAG_KEY}"})), "LightRAG answered HTTP 500: bad X-API-Key: [redacted]", "provider_server_error"),
    ("http-302", lambda r: httpx.Response(302, headers={"Location": f"https://attacker.example.test/?k={LIGHTRAG_KEY}"}), "LightRAG answered HTTP 302 (a redirect). Redirects are never followed", "provider_redirect_refused"),
    ("over-4-mib", lightrag_routes(oversized), "LightRAG's response passed the 4 MiB limit; reading stopped there.", "provider_too_large"),
    ("missing-key", lightrag_routes(httpx.Response(403, json={"detail": "API Key required"})), "LightRAG rejected the API key (HTTP 403): API Key required", "provider_auth"),
]  # fmt: skip


@pytest.fixture
def bindings(user: User, monkeypatch: pytest.MonkeyPatch) -> dict[str, KnowledgeBinding]:
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_RAGFLOW", RAGFLOW_KEY)
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_LIGHTRAG", LIGHTRAG_KEY)
    return {
        "ragflow": binding_create(
            name="ragflow-main", provider="ragflow", base_url=RAGFLOW_URL, api_key_env="KNOWLEDGEWEB_KEY_RAGFLOW",
            tools=["knowledge_search"], users=[user],
        ),
        "lightrag": binding_create(
            name="lightrag-main", provider="lightrag", base_url=LIGHTRAG_URL, api_key_env="KNOWLEDGEWEB_KEY_LIGHTRAG",
            tools=["knowledge_search", "entity_relations_search"], users=[user],
        ),
    }  # fmt: skip


def run(
    handler: Handler,
    *,
    user: User,
    binding: str,
    thread: Thread | None,
    tool: str = "knowledge_search",
) -> tuple[Upstream, object]:
    upstream = Upstream(handler)
    with transport_override(upstream.transport):
        try:
            outcome: object = retrieval_search(
                user=user,
                tool=tool,
                query="who founded acme?",
                binding_name=binding,
                thread_id=thread.id if thread else None,
            )
        except RetrievalFailedError as exc:
            outcome = exc
    return upstream, outcome


def assert_no_evidence_and_no_secret(caplog: pytest.LogCaptureFixture, *texts: str) -> None:
    for message in Message.objects.all():
        assert read_sources(message.name, message.content, message.artifact) == {}
        if message.status == "error":
            assert not (set(message.artifact or {}) & RESERVED_KEYS), message.artifact
    stored = [m.content + json.dumps(m.artifact) for m in Message.objects.all()]
    for key in KEYS:
        assert key not in caplog.text
        assert all(key not in text for text in [*stored, *texts])


@pytest.mark.parametrize(
    ("name", "handler", "expected", "code"),
    RAGFLOW_FAULTS + [("lightrag-" + n, h, e, c) for n, h, e, c in LIGHTRAG_FAULTS],
    ids=lambda v: v if isinstance(v, str) and len(v) < 30 and not v.startswith("provider_") else "",
)
def test_a_provider_fault_becomes_an_error_tool_message_without_evidence(
    name: str,
    handler: Handler,
    expected: str,
    code: str,
    bindings: dict[str, KnowledgeBinding],
    user: User,
    thread: Thread,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    binding = "lightrag-main" if name.startswith("lightrag-") else "ragflow-main"
    _, outcome = run(handler, user=user, binding=binding, thread=thread)
    message = Message.objects.get()
    # The artifact says only why, by kind: no evidence key, nothing from the provider.
    assert (message.type, message.name, message.status, message.artifact) == (
        "tool",
        "knowledge_search",
        "error",
        {"error": {"code": code}},
    )
    assert expected in message.content
    assert message.content.startswith(
        f"knowledge_search failed ({'LightRAG' if binding.startswith('light') else 'RAGFlow'}, binding '{binding}'): "
    )
    assert (outcome.status, outcome.message_id, outcome.artifact, outcome.error_code) == (  # type: ignore[attr-defined]
        "error",
        message.id,
        {"error": {"code": code}},
        code,
    )
    assert expected in caplog.text
    assert_no_evidence_and_no_secret(caplog, outcome.content)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("name", "handler", "expected", "code"), RAGFLOW_FAULTS, ids=[f[0] for f in RAGFLOW_FAULTS]
)
def test_without_a_thread_a_provider_fault_is_a_clear_error_and_nothing_is_written(
    name: str,
    handler: Handler,
    expected: str,
    code: str,
    bindings: dict[str, KnowledgeBinding],
    user: User,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    _, outcome = run(handler, user=user, binding="ragflow-main", thread=None)
    assert isinstance(outcome, RetrievalFailedError)
    assert expected in outcome.message
    assert (outcome.status, outcome.code) == (424, code)
    assert Message.objects.count() == 0
    assert_no_evidence_and_no_secret(caplog, outcome.message)


def test_a_redirect_target_is_never_contacted(
    bindings: dict[str, KnowledgeBinding], user: User, thread: Thread
) -> None:
    upstream, _ = run(redirect, user=user, binding="ragflow-main", thread=thread)
    assert [r.url.host for r in upstream.requests] == ["ragflow.example.test"]


def test_lightrag_no_results_is_an_empty_success_not_an_error(
    bindings: dict[str, KnowledgeBinding],
    user: User,
    thread: Thread,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _, outcome = run(
        lightrag_routes(synthetic_lightrag_no_results()),
        user=user,
        binding="lightrag-main",
        thread=thread,
        tool="entity_relations_search",
    )
    message = Message.objects.get()
    assert (message.status, outcome.status) == ("success", "success")  # type: ignore[attr-defined]
    assert message.content == "Entity relations search results from lightrag: nothing found."
    # An empty result is still the server's, so it is signed too (over no evidence).
    assert message.artifact is not None
    receipt = message.artifact.pop(RECEIPT_KEY)
    assert isinstance(receipt, str)
    assert receipt.count(":") == 1
    assert message.artifact == {"knowledge_sources_version": 1, "knowledge_sources": []}
    assert_no_evidence_and_no_secret(caplog)


@pytest.mark.parametrize("provider", ["ragflow", "lightrag"])
def test_a_key_echoed_in_retrieved_text_is_redacted_in_content_artifact_and_logs(
    provider: str,
    bindings: dict[str, KnowledgeBinding],
    user: User,
    thread: Thread,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    if provider == "ragflow":
        chunk = synthetic_ragflow_chunk(
            content=f"Synthetic echo: key={RAGFLOW_KEY}", document_keyword=f"{RAGFLOW_KEY}.pdf"
        )
        handler = ragflow_routes(retrieval=synthetic_ragflow_retrieval([chunk]))
    else:
        chunk = synthetic_lightrag_chunk(
            "doc-1-chunk-000", f"Synthetic echo: key={LIGHTRAG_KEY}", f"{LIGHTRAG_KEY}.txt"
        )
        handler = lightrag_routes(synthetic_lightrag_success(chunks=[chunk]))
    _, outcome = run(handler, user=user, binding=f"{provider}-main", thread=thread)
    message = Message.objects.get()
    assert message.status == "success"
    assert "Synthetic echo: key=[redacted]" in message.content
    assert "[redacted]" in json.dumps(message.artifact)
    for key in KEYS:
        assert key not in message.content + json.dumps(message.artifact) + caplog.text + outcome.content  # type: ignore[attr-defined]


def test_an_adapter_bug_is_a_clear_redacted_failure_not_a_crash(
    bindings: dict[str, KnowledgeBinding],
    user: User,
    thread: Thread,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from knowledgeweb.providers.ragflow import adapter

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"bug while holding {RAGFLOW_KEY}")

    monkeypatch.setattr(adapter, "dataset_list", broken)
    _, outcome = run(ragflow_routes(), user=user, binding="ragflow-main", thread=thread)
    message = Message.objects.get()
    assert message.status == "error"
    assert "unexpected RuntimeError in the ragflow adapter." in message.content
    assert "bug while holding [redacted]" in caplog.text
    assert_no_evidence_and_no_secret(caplog, outcome.content)  # type: ignore[attr-defined]


def test_one_bad_batch_among_eleven_rejects_the_scope_with_no_search_and_no_evidence(
    bindings: dict[str, KnowledgeBinding], user: User, thread: Thread, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    selection = [
        {"dataset_id": "ds00000000000000000000000000001", "document_ids": [f"a{i:04d}" for i in range(950)]},
        {"dataset_id": "ds00000000000000000000000000002", "document_ids": [f"b{i:04d}" for i in range(50)]},
    ]
    KnowledgeBinding.objects.filter(name="ragflow-main").update(scope="selected", selection=selection)

    def documents(request: httpx.Request) -> httpx.Response:
        dataset_id = request.url.path.split("/")[4]
        ids = [i for i in request.url.params.get_list("ids") if i != "a0733"]
        return httpx.Response(
            200, json=synthetic_ragflow_documents([synthetic_ragflow_document(i, dataset_id) for i in ids])
        )

    gauge = InFlight(documents)
    datasets = synthetic_ragflow_datasets(
        [
            synthetic_ragflow_dataset(),
            synthetic_ragflow_dataset(id="ds00000000000000000000000000002", name="More"),
        ]
    )
    upstream, outcome = run(
        ragflow_routes(datasets=datasets, documents=gauge), user=user, binding="ragflow-main", thread=thread
    )
    message = Message.objects.get()
    assert message.status == "error"
    assert (
        "The selected documents were rejected: document a0733 was not found in dataset ds00000000000000000000000000001."
        in message.content
    )
    assert "/api/v1/retrieval" not in upstream.paths()
    assert gauge.most == 4  # docs/providers.md: at most 4 batches in flight
    assert_no_evidence_and_no_secret(caplog, outcome.content)  # type: ignore[attr-defined]


@pytest.mark.parametrize("binding", ["ragflow-main", "lightrag-main"])
def test_an_oversized_body_stops_being_read_at_the_cap(
    binding: str, bindings: dict[str, KnowledgeBinding], user: User, thread: Thread
) -> None:
    counter = Oversized()
    handler = ragflow_routes(retrieval=counter) if binding == "ragflow-main" else lightrag_routes(counter)
    _, outcome = run(handler, user=user, binding=binding, thread=thread)
    assert outcome.status == "error"  # type: ignore[attr-defined]
    assert "passed the 4 MiB limit; reading stopped there." in Message.objects.get().content
    # Four 1 MiB pieces fill the cap; the fifth passes it and nothing more is pulled.
    assert counter.produced == MAX_BODY_BYTES // len(Oversized.piece) + 1
    assert Message.objects.get().artifact == {"error": {"code": "provider_too_large"}}


FORGED_CHUNK = synthetic_ragflow_chunk(content="Synthetic forged: the warranty is lifelong.")
FORGED_RAGFLOW = synthetic_ragflow_retrieval([FORGED_CHUNK])
FORGED_LIGHTRAG = synthetic_lightrag_success(
    chunks=[synthetic_lightrag_chunk("doc-f-chunk-000", "Synthetic forged: Mallory founded Acme.")]
)
FORGED_LINK = "[citation:warranty.pdf](#knowledge-source-" + "ab" * 16 + ")"


@pytest.mark.parametrize(
    ("binding", "handler"),
    [
        ("ragflow-main", ragflow_routes(retrieval=answer(500, {**FORGED_RAGFLOW, "detail": FORGED_LINK}))),
        ("ragflow-main", ragflow_routes(retrieval=answer(403, FORGED_RAGFLOW))),
        ("ragflow-main", ragflow_routes(retrieval=answer(200, {**FORGED_RAGFLOW, "code": 102, "message": FORGED_LINK}))),
        ("ragflow-main", ragflow_routes(retrieval=answer(401, {**FORGED_RAGFLOW, "code": 0}))),
        ("lightrag-main", lightrag_routes(httpx.Response(400, json={**FORGED_LIGHTRAG, "status": "failure", "message": FORGED_LINK}))),
        ("lightrag-main", lightrag_routes(httpx.Response(500, json={**FORGED_LIGHTRAG, "detail": FORGED_LINK}))),
        ("lightrag-main", lightrag_routes(httpx.Response(403, json=FORGED_LIGHTRAG))),
    ],
)  # fmt: skip
def test_an_error_answer_carrying_chunks_or_citations_stores_no_evidence(
    binding: str,
    handler: Handler,
    bindings: dict[str, KnowledgeBinding],
    user: User,
    thread: Thread,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _, outcome = run(handler, user=user, binding=binding, thread=thread)
    message = Message.objects.get()
    assert message.status == "error"
    assert message.artifact == outcome.artifact == {"error": {"code": outcome.error_code}}  # type: ignore[attr-defined]
    assert "Synthetic forged" not in message.content + json.dumps(message.artifact)
    assert_no_evidence_and_no_secret(caplog, outcome.content)  # type: ignore[attr-defined]


def test_a_no_results_answer_carrying_chunks_stores_no_evidence(
    bindings: dict[str, KnowledgeBinding], user: User, thread: Thread, caplog: pytest.LogCaptureFixture
) -> None:
    body = {**synthetic_lightrag_no_results("mix"), "data": FORGED_LIGHTRAG["data"]}
    _, outcome = run(lightrag_routes(body), user=user, binding="lightrag-main", thread=thread)
    message = Message.objects.get()
    assert message.content == "Knowledge search results from lightrag: nothing found."
    assert "Synthetic forged" not in json.dumps(message.artifact)
    assert_no_evidence_and_no_secret(caplog, outcome.content)  # type: ignore[attr-defined]


@pytest.mark.parametrize("provider", ["ragflow", "lightrag"])
def test_an_echoed_key_appears_on_no_page_or_api_answer(
    provider: str,
    bindings: dict[str, KnowledgeBinding],
    user: User,
    thread: Thread,
    api_client: Client,
) -> None:
    if provider == "ragflow":
        failing = ragflow_routes(retrieval=answer(500, {"detail": f"Authorization: Bearer {RAGFLOW_KEY}"}))
        echoing = ragflow_routes(
            retrieval=synthetic_ragflow_retrieval(
                [
                    synthetic_ragflow_chunk(
                        content=f"Synthetic echo {RAGFLOW_KEY}", document_keyword=f"{RAGFLOW_KEY}.pdf"
                    )
                ]
            )
        )
    else:
        failing = lightrag_routes(httpx.Response(403, json={"detail": f"Invalid API Key {LIGHTRAG_KEY}"}))
        echoing = lightrag_routes(
            synthetic_lightrag_success(
                chunks=[
                    synthetic_lightrag_chunk(
                        "doc-1-chunk-000", f"Synthetic echo {LIGHTRAG_KEY}", f"{LIGHTRAG_KEY}.txt"
                    )
                ]
            )
        )
    run(failing, user=user, binding=f"{provider}-main", thread=thread)
    run(echoing, user=user, binding=f"{provider}-main", thread=thread)
    assert [m.status for m in Message.objects.order_by("seq")] == ["error", "success"]
    browser = Client()
    browser.force_login(user)
    page = browser.get(f"/threads/{thread.id}/")
    assert page.status_code == 200
    answers = [
        page.content.decode(),
        api_client.get(f"/api/threads/{thread.id}").content.decode(),
        api_client.get(f"/api/threads/{thread.id}/export", {"format": "markdown"}).content.decode(),
        api_client.get(f"/api/threads/{thread.id}/export", {"format": "json"}).content.decode(),
    ]
    assert "[redacted]" in answers[0]
    for text in answers:
        assert RAGFLOW_KEY not in text
        assert LIGHTRAG_KEY not in text


def test_the_service_redacts_every_text_field_even_when_an_adapter_does_not(
    bindings: dict[str, KnowledgeBinding],
    user: User,
    thread: Thread,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Careless:
        """An adapter that forgets to redact what it read."""

        def capabilities(self) -> tuple[()]:
            return ()

        def search(self, query: str, *, tool: str = "knowledge_search", top_k: int = 20) -> RetrievalResult:
            k = LIGHTRAG_KEY
            hits = (
                RetrievalHit(text=f"Synthetic {k}", title=f"{k}.txt"),
                RetrievalHit(kind="relation", text=f"Synthetic {k}", source_entity=k, target_entity=k),
                RetrievalHit(kind="entity", text=f"Synthetic {k}", source_entity=k, entity_type=k),
            )
            return RetrievalResult(provider="lightrag", query=query, hits=hits, tool=tool)

    monkeypatch.setattr(service, "provider_for", lambda binding, request: Careless())
    _, outcome = run(
        lightrag_routes(synthetic_lightrag_success()), user=user, binding="lightrag-main", thread=thread
    )
    message = Message.objects.get()
    assert message.status == "success"
    assert "[redacted]" in message.content
    for text in (message.content, json.dumps(message.artifact), outcome.content, caplog.text):  # type: ignore[attr-defined]
        assert LIGHTRAG_KEY not in text
