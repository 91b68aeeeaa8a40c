"""Evidence receipts (issue 28): an import keeps the evidence this server signed for the importer,
and nothing else: no change to a record, a source id or the receipt, no receipt moved onto other
evidence or to another user, no old receipt and none whose binding no longer serves the user.

Searches run for real through the API over the local index; imports go through the API (and the
service, for the property test), as an agent that searched and was imported would.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import signing
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.knowledge import shared_handle
from knowledgeweb.knowledge.reserved import EVIDENCE_KEYS, RECEIPT_KEY
from knowledgeweb.threads.evidence import REASON_UNSIGNED
from knowledgeweb.threads.interchange.imports import thread_import_body
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.receipts import receipt_check, receipt_issue
from knowledgeweb.threads.selectors import thread_citations
from tests.factories import BindingFactory, CollectionFactory, TokenFactory, logged_in

pytestmark = pytest.mark.django_db

HOURS = "The reading room opens at nine on weekdays and at ten on Saturdays."
LOANS = "Books may be borrowed for three weeks and renewed twice online."


@pytest.fixture
def binding(user: User, other_user: User) -> KnowledgeBinding:
    collection = CollectionFactory.create(documents={"Opening hours": HOURS, "Loans": LOANS})
    return BindingFactory.create(name="library", users=[user, other_user], collections=[collection])


@pytest.fixture
def bob_client(other_user: User) -> Client:
    return TokenFactory.create(user=other_user).client()


def post(client: Client, path: str, body: Any) -> Any:
    return client.post(path, json.dumps(body), content_type="application/json")


def search(client: Client, query: str, **extra: Any) -> dict[str, Any]:
    response = post(client, "/api/knowledge/search", {"tool": "knowledge_search", "query": query, **extra})
    assert response.status_code == 200, response.content
    body: dict[str, Any] = response.json()
    assert body["artifact"]["knowledge_sources"], "the search found evidence"
    return body


def first_handle(artifact: dict[str, Any]) -> str:
    return shared_handle(artifact["knowledge_sources"][0]["id"])


def agent_thread(
    artifact: Any, handle: str, *, tool_content: str = "(rewritten by the client)"
) -> dict[str, Any]:
    """An agent's thread as a LangChain client writes it: the question, the call, the tool result
    (its content rewritten, its artifact as the server returned it) and an answer citing ``handle``."""
    return {
        "title": "imported",
        "messages": [
            {"type": "human", "content": "When does the reading room open?"},
            {
                "type": "ai",
                "content": "",
                "tool_calls": [{"id": "call_1", "name": "knowledge_search", "args": {"query": "opens"}}],
            },
            {
                "type": "tool",
                "name": "knowledge_search",
                "tool_call_id": "call_1",
                "content": tool_content,
                "artifact": artifact,
            },
            {"type": "ai", "content": f"It opens at nine [Opening hours](#{handle})."},
        ],
    }


def citations(client: Client, thread_id: str) -> list[dict[str, Any]]:
    response = client.get(f"/api/threads/{thread_id}/citations")
    assert response.status_code == 200
    return [c for entry in response.json()["messages"] for c in entry["citations"]]


def import_api(client: Client, body: dict[str, Any]) -> str:
    response = post(client, "/api/threads/import", body)
    assert response.status_code == 201, response.content
    return str(response.json()["id"])


def tool_message(thread_id: str) -> Message:
    return Message.objects.get(thread_id=thread_id, type="tool")


def assert_stripped(thread_id: str) -> None:
    """The import kept no evidence and no receipt, recorded why, and no citation resolved."""
    message = tool_message(thread_id)
    assert not (set(message.artifact or {}) & (EVIDENCE_KEYS | {RECEIPT_KEY})), message.artifact
    assert message.evidence_check is not None
    assert message.evidence_check["state"] == "unsigned"
    thread = Thread.objects.get(pk=thread_id)
    assert thread.citations_resolved == 0
    verdicts = [c for entry in thread_citations(thread=thread) for c in entry.citations]
    assert verdicts
    assert {(c.state, c.reason) for c in verdicts} == {("unresolved", REASON_UNSIGNED)}


def test_the_same_user_imports_a_search_with_its_evidence_signed_and_resolved(
    binding: KnowledgeBinding, user: User, api_client: Client
) -> None:
    body = search(api_client, "reading room opens")
    artifact = body["artifact"]
    handle = first_handle(artifact)
    thread_id = import_api(api_client, agent_thread(artifact, handle))
    (citation,) = citations(api_client, thread_id)
    assert (citation["state"], citation["reason_code"]) == ("resolved", "")
    assert citation["source"]["excerpt"] == HOURS
    check = tool_message(thread_id).evidence_check
    assert check is not None
    assert check["state"] == "signed"
    assert (check["tool"], check["binding"]) == (
        "knowledge_search",
        binding.pk,
    )
    # The page shows the signed evidence, not the imported text of the tool message.
    page = logged_in(user).get(f"/threads/{thread_id}/").content.decode()
    assert 'data-evidence="signed"' in page
    assert HOURS in page
    assert "(rewritten by the client)" not in page


def test_another_user_importing_the_same_search_gets_the_signature_reason(
    binding: KnowledgeBinding, other_user: User, api_client: Client, bob_client: Client
) -> None:
    artifact = search(api_client, "reading room opens")["artifact"]
    thread_id = import_api(bob_client, agent_thread(artifact, first_handle(artifact)))
    assert_stripped(thread_id)
    (citation,) = citations(bob_client, thread_id)
    assert (citation["state"], citation["reason_code"], citation["reason"]) == (
        "unresolved",
        "evidence_unsigned",
        REASON_UNSIGNED,
    )
    page = logged_in(other_user).get(f"/threads/{thread_id}/").content.decode()
    assert 'data-evidence="unsigned"' in page
    assert "Evidence imported without a valid signature: not checked by this server." in page
    assert REASON_UNSIGNED in page


def _change(text: str, position: int = 0) -> str:
    """``text`` with the character at ``position`` replaced by another."""
    old = text[position]
    return text[:position] + ("b" if old != "b" else "c") + text[position + 1 :]


def _with_record(field: str) -> Callable[[dict[str, Any], dict[str, Any]], None]:
    def forge(artifact: dict[str, Any], _other: dict[str, Any]) -> None:
        record = artifact["knowledge_sources"][0]
        record[field] = _change(record[field], len(record[field]) // 2)

    return forge


def _receipt_byte(position: int) -> Callable[[dict[str, Any], dict[str, Any]], None]:
    def forge(artifact: dict[str, Any], _other: dict[str, Any]) -> None:
        artifact[RECEIPT_KEY] = _change(artifact[RECEIPT_KEY], position % len(artifact[RECEIPT_KEY]))

    return forge


def _replayed(artifact: dict[str, Any], other: dict[str, Any]) -> None:
    # The receipt of another search, moved onto this one's evidence.
    artifact[RECEIPT_KEY] = other[RECEIPT_KEY]


def _record_dropped(artifact: dict[str, Any], _other: dict[str, Any]) -> None:
    # The second record removed: what is left is still genuine, but not what was signed.
    artifact["knowledge_sources"] = artifact["knowledge_sources"][:1]


def _record_added(artifact: dict[str, Any], other: dict[str, Any]) -> None:
    # Genuine evidence of another search appended under this search's receipt.
    artifact["knowledge_sources"] = [*artifact["knowledge_sources"], *other["knowledge_sources"]]


def _other_salt(artifact: dict[str, Any], _other: dict[str, Any]) -> None:
    # The same fields signed with this server's key under another salt (a session's, say).
    value = artifact[RECEIPT_KEY].rsplit(":", 1)[0]
    artifact[RECEIPT_KEY] = signing.Signer(salt="django.contrib.sessions").sign(value)


FORGERIES = {
    "record title": _with_record("title"),
    "record excerpt": _with_record("excerpt"),
    "record provider": _with_record("provider"),
    "source id": _with_record("id"),
    "receipt first byte": _receipt_byte(0),
    "receipt middle byte": _receipt_byte(40),
    "receipt last byte": _receipt_byte(-1),
    "receipt replayed onto other evidence": _replayed,
    "a signed record dropped": _record_dropped,
    "a record added": _record_added,
    "receipt under another salt": _other_salt,
}


@pytest.mark.parametrize("forge", FORGERIES.values(), ids=FORGERIES.keys())
def test_a_forged_receipt_or_record_resolves_nothing(
    binding: KnowledgeBinding, api_client: Client, forge: Callable[[dict[str, Any], dict[str, Any]], None]
) -> None:
    searched = search(api_client, "reading room opens on weekdays, books borrowed")
    artifact, content = searched["artifact"], searched["content"]
    assert len(artifact["knowledge_sources"]) == 2
    other = search(api_client, "books borrowed renewed online")["artifact"]
    handle = first_handle(artifact)
    forged = copy.deepcopy(artifact)
    forge(forged, other)
    assert forged != artifact
    # The tool content as the server wrote it: the page can say which citations it stripped.
    assert_stripped(import_api(api_client, agent_thread(forged, handle, tool_content=content)))


def test_a_receipt_issued_to_another_user_resolves_nothing_for_the_importer(
    binding: KnowledgeBinding, api_client: Client, bob_client: Client
) -> None:
    # Bob's own search, imported by alice (who may use the same binding).
    artifact = search(bob_client, "reading room opens")["artifact"]
    assert_stripped(import_api(api_client, agent_thread(artifact, first_handle(artifact))))


def test_an_expired_receipt_resolves_nothing(
    binding: KnowledgeBinding, user: User, api_client: Client, settings: Any
) -> None:
    settings.KNOWLEDGEWEB_RECEIPT_MAX_AGE = 3600
    artifact = search(api_client, "reading room opens")["artifact"]
    handle = first_handle(artifact)
    # Signed with the server's real key, only issued longer ago than the maximum age.
    old = {key: value for key, value in artifact.items() if key != RECEIPT_KEY}
    issued = int(time.time()) - 3600 - 5
    old[RECEIPT_KEY] = receipt_issue(
        user_id=user.pk, binding_id=binding.pk, tool="knowledge_search", artifact=old, issued_at=issued
    )
    assert receipt_check(user=user, artifact=old).problem == "expired"
    assert_stripped(import_api(api_client, agent_thread(old, handle)))
    # Within the age, the same receipt checks.
    settings.KNOWLEDGEWEB_RECEIPT_MAX_AGE = 3600 + 60
    assert receipt_check(user=user, artifact=old).ok


@pytest.mark.parametrize(
    "change",
    [
        {"enabled": False},
        {"scope": "disabled"},
        {"tools": ["entity_relations_search"]},
        "user removed",
    ],
    ids=["binding disabled", "scope disabled", "tool withdrawn", "user removed"],
)
def test_a_receipt_whose_binding_no_longer_serves_the_user_resolves_nothing(
    binding: KnowledgeBinding, user: User, api_client: Client, change: Any
) -> None:
    artifact = search(api_client, "reading room opens")["artifact"]
    if change == "user removed":
        binding.users.remove(user)
    else:
        KnowledgeBinding.objects.filter(pk=binding.pk).update(**change)
    assert receipt_check(user=user, artifact=artifact).problem == "binding no longer serves the user"
    assert_stripped(import_api(api_client, agent_thread(artifact, first_handle(artifact))))


def test_a_rotated_secret_key_still_checks_through_the_fallbacks(
    binding: KnowledgeBinding, user: User, api_client: Client, settings: Any
) -> None:
    artifact = search(api_client, "reading room opens")["artifact"]
    old_key = settings.SECRET_KEY
    settings.SECRET_KEY = "a-new-key-" + "x" * 50
    settings.SECRET_KEY_FALLBACKS = [old_key]
    assert receipt_check(user=user, artifact=artifact).ok
    settings.SECRET_KEY_FALLBACKS = []
    assert receipt_check(user=user, artifact=artifact).problem == "bad signature"


# --- The property: no single-character change anywhere in the evidence or the receipt resolves -------


def _string_leaves(artifact: dict[str, Any]) -> list[tuple[Any, Any]]:
    """(container, key) of every string in the artifact's records and its receipt."""
    leaves: list[tuple[Any, Any]] = [(artifact, RECEIPT_KEY)]
    for record in artifact["knowledge_sources"]:
        leaves += [(record, key) for key, value in record.items() if isinstance(value, str) and value]
    return leaves


@pytest.fixture
def signed_search(binding: KnowledgeBinding, api_client: Client) -> dict[str, Any]:
    return search(api_client, "reading room opens on weekdays, books borrowed")["artifact"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_single_character_change_resolves_nothing(
    user: User, signed_search: dict[str, Any], data: st.DataObject
) -> None:
    forged = copy.deepcopy(signed_search)
    leaves = _string_leaves(forged)
    container, key = data.draw(st.sampled_from(leaves), label="field")
    text: str = container[key]
    position = data.draw(st.integers(0, len(text) - 1), label="position")
    new = data.draw(
        st.characters(codec="utf-8", exclude_characters="\x00").filter(lambda c: c != text[position])
    )
    container[key] = text[:position] + new + text[position + 1 :]
    handles = [shared_handle(r["id"]) for r in signed_search["knowledge_sources"]]
    body = agent_thread(forged, handles[0])
    body["messages"][-1]["content"] = " ".join(f"[s](#{h})" for h in handles)
    thread = thread_import_body(owner=user, body=body)
    assert thread.citations_resolved == 0
    assert not (set(tool_message(str(thread.id)).artifact or {}) & (EVIDENCE_KEYS | {RECEIPT_KEY}))


def test_the_unchanged_search_resolves_every_citation_in_the_property_setup(
    user: User, signed_search: dict[str, Any]
) -> None:
    # The property's control: without a change, every citation of the same body resolves.
    handles = [shared_handle(r["id"]) for r in signed_search["knowledge_sources"]]
    body = agent_thread(signed_search, handles[0])
    body["messages"][-1]["content"] = " ".join(f"[s](#{h})" for h in handles)
    thread = thread_import_body(owner=user, body=body)
    assert thread.citations_resolved == len(handles) == 2


# --- A recorded thread's JSON export imports back with every resolved citation resolved ------------


def test_the_json_export_of_a_recorded_thread_imports_back_resolved_through_the_api(
    binding: KnowledgeBinding, api_client: Client
) -> None:
    thread_id = post(api_client, "/api/threads", {"title": "recorded"}).json()["id"]
    post(api_client, f"/api/threads/{thread_id}/messages", {"type": "human", "content": "Hours and loans?"})
    first = search(api_client, "reading room opens", thread_id=thread_id)["artifact"]
    second = search(api_client, "books borrowed renewed", thread_id=thread_id)["artifact"]
    handles = [first_handle(first), first_handle(second)]
    answer = f"Nine [hours](#{handles[0]}), three weeks [loans](#{handles[1]}), and [x](#knowledge-source-{'0' * 32})."
    post(api_client, f"/api/threads/{thread_id}/messages", {"type": "ai", "content": answer})
    before = citations(api_client, thread_id)
    assert [c["state"] for c in before] == ["resolved", "resolved", "unresolved"]
    exported = api_client.get(f"/api/threads/{thread_id}/export?format=json")
    assert exported.status_code == 200
    again = import_api(api_client, json.loads(exported.content))
    after = citations(api_client, again)
    assert [(c["state"], c["href"], c["number"]) for c in after] == [
        (c["state"], c["href"], c["number"]) for c in before
    ]
    assert Thread.objects.get(pk=again).citations_resolved == 2


# --- Every path that searches signs what it records ------------------------------------------


def test_every_path_that_searches_records_a_signed_tool_message(
    binding: KnowledgeBinding, user: User, api_client: Client
) -> None:
    """The API search (with and without a thread), an Ask over the API, the Ask page and a
    follow-up on it: every tool message the retrieval service wrote carries a receipt that
    checks for its user, and the export of the whole thread imports back resolved."""
    thread_id = post(api_client, "/api/threads", {"title": "paths"}).json()["id"]
    unrecorded = search(api_client, "reading room opens")["artifact"]
    search(api_client, "reading room opens", thread_id=thread_id)
    asked = post(
        api_client, f"/api/threads/{thread_id}/ask", {"question": "When does it open?", "binding": "library"}
    )
    assert asked.status_code == 200, asked.content
    browser = logged_in(user)
    page = browser.post("/ask/", {"question": "How long may books be borrowed?", "binding": "library"})
    assert page.status_code == 302
    followed = browser.post(f"{page['Location']}ask/", {"question": "And renewed?", "binding": "library"})
    assert followed.status_code == 302
    tools = list(Message.objects.filter(type="tool"))
    assert len(tools) == 4
    assert receipt_check(user=user, artifact=unrecorded).ok
    for message in tools:
        check = receipt_check(user=user, artifact=message.artifact)
        assert check.ok, (message.thread.title, check.problem)
        assert check.sources
    for thread in Thread.objects.all():
        exported = api_client.get(f"/api/threads/{thread.id}/export?format=json")
        again = Thread.objects.get(pk=import_api(api_client, json.loads(exported.content)))
        assert again.citations_resolved == thread.citations_resolved
        assert thread.citations_resolved > 0
