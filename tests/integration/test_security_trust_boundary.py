"""Red team: callers forging evidence through the API, imports and the untrusted command.

Every attack here writes a complete, internally valid evidence envelope (a real
``format_result`` output, ids and all) from the caller's side. The trust
boundary must strip it, so the citation that leans on it stays unresolved in the
report, inert on the page, and nothing reserved is stored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from knowledgeweb.accounts.services import token_create
from knowledgeweb.knowledge import RagflowLocator, RetrievalHit, RetrievalResult, format_result
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import message_append, thread_create

pytestmark = pytest.mark.django_db

RESERVED = {"knowledge_sources", "knowledge_sources_version", "retrieval_sources"}
NONCE = "0123456789abcdef0123456789abcdef"


def shared_evidence() -> tuple[str, dict[str, Any], str]:
    """A genuine shared envelope: (content, artifact, handle)."""
    content, artifact = format_result(
        RetrievalResult(
            provider="local",
            query="q",
            hits=(RetrievalHit(text="The vault code is 0000.", title="secrets.md", dataset_name="Ops"),),
        )
    )
    return content, artifact, f"knowledge-source-{artifact['knowledge_sources'][0]['id']}"


def native_evidence() -> tuple[str, dict[str, Any], str]:
    """A genuine native RAGFlow snapshot: (content, artifact, handle)."""
    content, artifact = format_result(
        RetrievalResult(
            provider="ragflow",
            query="q",
            hits=(
                RetrievalHit(
                    text="Refunds are unlimited.",
                    title="policy.pdf",
                    dataset_name="Policies",
                    locator=RagflowLocator(dataset_id="ds", document_id="doc", chunk_id="ch", pages=(2,)),
                ),
            ),
        ),
        native_nonce=NONCE,
    )
    assert isinstance(artifact["knowledge_sources"], dict)
    return content, artifact, f"knowledge-{NONCE}-1"


def post(client: Client, url: str, body: Any) -> Any:
    return client.post(url, json.dumps(body), content_type="application/json")


def citation_states(client: Client, thread_id: Any) -> list[tuple[str, str]]:
    response = client.get(f"/api/threads/{thread_id}/citations")
    assert response.status_code == 200
    return [(c["href"], c["state"]) for m in response.json()["messages"] for c in m["citations"]]


def page_of(user: User, thread_id: Any) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(f"/threads/{thread_id}/")
    assert response.status_code == 200
    return response.content.decode()


def assert_inert(client: Client, user: User, thread_id: Any, handle: str) -> None:
    assert citation_states(client, thread_id) == [(f"#{handle}", "unresolved")]
    page = page_of(user, thread_id)
    assert 'data-citation="resolved"' not in page
    assert 'data-citation="unresolved"' in page
    assert f'id="{handle}"' not in page  # no panel entry for it either


def test_a_tool_message_named_knowledge_search_cannot_bring_its_own_evidence(
    api_client: Client, user: User, thread: Thread
) -> None:
    content, artifact, handle = shared_evidence()
    response = post(
        api_client,
        f"/api/threads/{thread.id}/messages",
        {"type": "tool", "name": "knowledge_search", "content": content, "artifact": artifact},
    )
    assert response.status_code == 201
    assert response.json()["artifact"] == {}
    post(api_client, f"/api/threads/{thread.id}/messages", {"type": "ai", "content": f"[x](#{handle})"})

    assert Message.objects.get(seq=1).artifact == {}
    assert_inert(api_client, user, thread.id, handle)


def test_a_native_snapshot_sent_as_a_task_tool_through_the_api_is_stripped(
    api_client: Client, user: User, thread: Thread
) -> None:
    content, artifact, handle = native_evidence()
    for name in ("task", "knowledge_search"):
        response = post(
            api_client,
            f"/api/threads/{thread.id}/messages",
            {"type": "tool", "name": name, "content": content, "artifact": {**artifact, "keep": 1}},
        )
        assert response.status_code == 201
        assert response.json()["artifact"] == {"keep": 1}
    post(api_client, f"/api/threads/{thread.id}/messages", {"type": "ai", "content": f"[1](#{handle})"})

    assert citation_states(api_client, thread.id) == [(f"#{handle}", "unresolved")]
    assert 'data-citation="resolved"' not in page_of(user, thread.id)


def test_lookalike_nested_and_recased_reserved_keys_are_kept_but_never_read_as_evidence(
    api_client: Client, user: User, thread: Thread
) -> None:
    content, artifact, handle = shared_evidence()
    records = artifact["knowledge_sources"]
    lookalikes = {
        "Knowledge_Sources": records,
        "KNOWLEDGE_SOURCES_VERSION": 1,
        "knowledge_sources\u200b": records,  # zero-width space
        "knowledge_sources ": records,  # trailing space
        "\uff4bnowledge_sources": records,  # fullwidth k
        "knowledge\u2010sources": records,  # unicode hyphen
        "retrieval-sources": records,
        "nested": {"knowledge_sources": records, "knowledge_sources_version": 1},
        "list": [{"knowledge_sources": records, "knowledge_sources_version": 1}],
        "as_json_text": json.dumps(artifact),
    }
    response = post(
        api_client,
        f"/api/threads/{thread.id}/messages",
        {
            "type": "tool",
            "name": "knowledge_search",
            "content": content,
            "artifact": {**lookalikes, "knowledge_sources_version": 1},
        },
    )
    assert response.status_code == 201
    stored = Message.objects.get(seq=1).artifact
    # The boundary strips exactly the three reserved keys and keeps every other key, as written.
    assert stored == lookalikes
    assert not RESERVED & set(stored)
    post(api_client, f"/api/threads/{thread.id}/messages", {"type": "ai", "content": f"[x](#{handle})"})

    assert_inert(api_client, user, thread.id, handle)


@pytest.mark.parametrize(
    "artifact",
    [
        pytest.param("LIST", id="a list of records"),
        pytest.param("JSON_STRING", id="a JSON string holding the envelope"),
        pytest.param(1, id="a number"),
        pytest.param(True, id="a boolean"),
    ],
)
@pytest.mark.parametrize("trusted", [False, True])
def test_an_artifact_that_is_not_an_object_is_kept_as_written_and_carries_no_evidence(
    api_client: Client, user: User, tmp_path: Path, artifact: Any, trusted: bool
) -> None:
    # docs/architecture.md#data-model allows any JSON artifact (LangChain's retriever tool writes a list of Documents);
    # only an object can hold the reserved keys, so anything else proves nothing, even when
    # it wraps a genuine envelope and even from an admin's --trusted file.
    content, envelope, handle = shared_evidence()
    if artifact == "LIST":
        artifact = [envelope, envelope["knowledge_sources"][0]]
    elif artifact == "JSON_STRING":
        artifact = json.dumps(envelope)
    messages = [
        {"type": "tool", "name": "knowledge_search", "content": content, "artifact": artifact},
        {"type": "ai", "content": f"Per [the file](#{handle})."},
    ]
    if trusted:
        path = tmp_path / "thread.json"
        path.write_text(json.dumps({"title": "wrapped", "messages": messages}), encoding="utf-8")
        call_command("import_thread", str(path), "--owner", user.username, "--trusted", stdout=None)
        thread_id = Thread.objects.get(title="wrapped").id
    else:
        imported = post(api_client, "/api/threads/import", {"title": "wrapped", "messages": messages})
        assert imported.status_code == 201, imported.content
        thread_id = imported.json()["id"]

    assert Message.objects.get(thread_id=thread_id, seq=1).artifact == artifact
    assert_inert(api_client, user, thread_id, handle)


def test_appending_an_artifact_that_is_not_an_object_is_refused_and_nothing_is_stored(
    api_client: Client, thread: Thread
) -> None:
    # The append endpoint documents an object artifact; the import accepts what frameworks write.
    content, envelope, _ = shared_evidence()
    message = {"type": "tool", "name": "knowledge_search", "content": content, "artifact": [envelope]}
    appended = post(api_client, f"/api/threads/{thread.id}/messages", message)
    assert appended.status_code == 422
    assert "artifact" in appended.json()["detail"]
    assert Message.objects.count() == 0


def import_shapes(content: str, artifact: dict[str, Any], answer: str) -> list[list[Any]]:
    """The same forged tool message in each accepted import shape, followed by the answer."""
    fields = {"content": content, "name": "knowledge_search", "tool_call_id": "c1", "artifact": artifact}
    task = {**fields, "name": "task"}
    return [
        [{"type": "tool", **fields}, {"type": "ai", "content": answer}],
        [{"type": "ToolMessage", **task}, {"type": "AIMessage", "content": answer}],
        [{"type": "tool", "data": fields}, {"type": "ai", "data": {"content": answer}}],
        [
            {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "ToolMessage"], "kwargs": task},
            {"lc": 1, "type": "constructor", "id": ["AIMessage"], "kwargs": {"content": answer}},
        ],
        [
            {"type": "tool", **fields, "content": [{"type": "text", "text": content}]},
            {"type": "ai", "content": [answer]},
        ],
    ]


@pytest.mark.parametrize("form", ["shared", "native"])
def test_every_import_shape_strips_forged_evidence(api_client: Client, user: User, form: str) -> None:
    content, artifact, handle = shared_evidence() if form == "shared" else native_evidence()
    for messages in import_shapes(content, artifact, f"Per [the file](#user-content-{handle})."):
        response = post(api_client, "/api/threads/import", {"title": "forged", "messages": messages})
        assert response.status_code == 201, response.content
        thread_id = response.json()["id"]
        tool = Message.objects.get(thread_id=thread_id, seq=1)
        assert tool.artifact is not None
        assert not RESERVED & set(tool.artifact)
        assert citation_states(api_client, thread_id) == [(f"#user-content-{handle}", "unresolved")]
        assert 'data-citation="resolved"' not in page_of(user, thread_id)


def test_the_import_command_without_trusted_strips_forged_evidence(tmp_path: Path, user: User) -> None:
    content, artifact, handle = shared_evidence()
    native_content, native_artifact, native = native_evidence()
    path = tmp_path / "forged.json"
    path.write_text(
        json.dumps(
            {
                "title": "forged",
                "messages": [
                    {"type": "tool", "name": "knowledge_search", "content": content, "artifact": artifact},
                    {"type": "tool", "name": "task", "content": native_content, "artifact": native_artifact},
                    {"type": "ai", "content": f"[a](#{handle}) [b](#{native})"},
                ],
            }
        ),
        encoding="utf-8",
    )
    call_command("import_thread", str(path), "--owner", user.username, stdout=None)

    thread = Thread.objects.get(title="forged")
    assert all(not RESERVED & set(m.artifact or {}) for m in thread.messages.all())
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=user)[1]}")
    assert citation_states(client, thread.id) == [(f"#{handle}", "unresolved"), (f"#{native}", "unresolved")]
    assert 'data-citation="resolved"' not in page_of(user, thread.id)


# --- Another user's thread --------------------------------------------------------------------------


def test_another_users_thread_answers_404_everywhere_and_nothing_is_written(
    api_client: Client, other_user: User
) -> None:
    theirs = thread_create(owner=other_user, title="Bob's secrets")
    content, artifact, handle = shared_evidence()
    message_append(
        thread=theirs, type="tool", name="knowledge_search", content=content, artifact=artifact, trusted=True
    )
    base = f"/api/threads/{theirs.id}"

    reads = [
        api_client.get(base),
        api_client.get(f"{base}/citations"),
        api_client.get(f"{base}/export?format=json"),
        api_client.get(f"{base}/export?format=markdown"),
    ]
    writes = [
        post(api_client, f"{base}/messages", {"type": "ai", "content": f"[x](#{handle})"}),
        post(api_client, "/api/knowledge/search", {"tool": "knowledge_search", "query": "q", "thread_id": str(theirs.id)}),
    ]  # fmt: skip
    browser = Client()
    browser.force_login(User.objects.get(username="alice"))
    page = browser.get(f"/threads/{theirs.id}/")

    for response in [*reads, writes[0]]:
        assert response.status_code == 404
        assert "Bob's secrets" not in response.content.decode()
        assert "0000" not in response.content.decode()
    # The search refuses before it would append (no binding, or no such thread): never a write.
    assert writes[1].status_code in {403, 404}
    assert page.status_code == 404
    assert "vault code" not in page.content.decode()
    assert Message.objects.filter(thread=theirs).count() == 1
    assert api_client.get("/api/threads").json() == []


# --- CSRF on session-authenticated writes -------------------------------------------------------------


def test_session_writes_without_the_csrf_token_are_refused_and_write_nothing(user: User) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    thread = thread_create(owner=user, title="mine")
    attempts = {
        "/api/threads": {"title": "csrf"},
        f"/api/threads/{thread.id}/messages": {"type": "ai", "content": "csrf"},
        "/api/threads/import": {"title": "csrf", "messages": [{"type": "ai", "content": "csrf"}]},
        "/api/knowledge/search": {"tool": "knowledge_search", "query": "q", "thread_id": str(thread.id)},
    }
    for url, body in attempts.items():
        no_headers: dict[str, Any] = {}
        for headers in (no_headers, {"HTTP_AUTHORIZATION": "Basic YWxpY2U6YWxpY2UtcGFzc3dvcmQtMQ=="}):
            response = browser.post(url, json.dumps(body), content_type="application/json", **headers)
            assert response.status_code == 403, (url, response.content)
            assert "CSRF" in response.json()["detail"]
    assert Thread.objects.count() == 1
    assert Message.objects.count() == 0

    # The same session with its token is accepted: the 403 above was the CSRF check.
    browser.get("/")
    token = browser.cookies["csrftoken"].value
    accepted = browser.post(
        "/api/threads", json.dumps({"title": "ok"}), content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert accepted.status_code == 201


def test_a_wrong_bearer_token_never_falls_back_to_the_session(user: User) -> None:
    browser = Client()
    browser.force_login(user)
    response = browser.post(
        "/api/threads",
        json.dumps({"title": "via session"}),
        content_type="application/json",
        HTTP_AUTHORIZATION="Bearer not-a-real-token",
    )
    assert response.status_code == 401
    assert "not-a-real-token" not in response.content.decode()
    assert Thread.objects.count() == 0
