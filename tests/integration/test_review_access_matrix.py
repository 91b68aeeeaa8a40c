"""The access matrix, generated: every route of the URLconf, every operation of the API and every
MCP tool, against the owner, a reviewer, the lead, a reviewer of another queue, a removed
reviewer and an outsider, each with the status it must answer (issue 26).

The routes and operations are read from the URLconf, the OpenAPI document and the MCP tool
list; a route, operation or tool with no row here fails ``test_every_route_has_a_row``, so a
new one is placed in the matrix on purpose. Thread-scoped rows use one fresh world per row
(the owner asks last, since some of its requests delete or add). ``(status, code)`` pins the
API's code where two roles share a status for different reasons.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from knowledgeweb.api.main import api
from knowledgeweb.mcp_server.identity import Caller
from knowledgeweb.mcp_server.tools import TOOLS_BY_NAME, tool_call
from knowledgeweb.review.models import Verdict
from knowledgeweb.review.services import verdict_record
from tests.factories import logged_in
from tests.reviewing import ROLES, ReviewWorld, remove_reviewer, review_world

pytestmark = pytest.mark.django_db

Expect = Mapping[str, int | tuple[int, str]]
# Role order: the owner last (its writes may delete the thread).
ORDER = ("outsider", "removed", "other_reviewer", "lead", "reviewer", "owner")


def _roles(owner: Any, reviewer: Any, lead: Any, others: Any) -> dict[str, Any]:
    return {
        "owner": owner,
        "reviewer": reviewer,
        "lead": lead,
        "other_reviewer": others,
        "removed": others,
        "outsider": others,
    }


def read(ok: int = 200) -> dict[str, Any]:
    """Readable by the owner and the queue's reviewer and lead; 404 to everyone else."""
    return _roles(ok, ok, ok, 404)


def write(owner: Any) -> dict[str, Any]:
    """The owner's alone: the reviewer and the lead read it, so they are told no (403)."""
    return _roles(owner, (403, "forbidden"), (403, "forbidden"), 404)


def judge(ok: int) -> dict[str, Any]:
    """A verdict: the reviewer and the lead judge; the owner reads but judges nothing (403)."""
    return _roles((403, "forbidden"), ok, ok, 404)


def queue_read(ok: Any = 200, reviewer: Any = None) -> dict[str, Any]:
    """A queue's page or operation: its reviewer and lead; the thread's owner is no reviewer."""
    return _roles(404, ok if reviewer is None else reviewer, ok, 404)


def queue_lead(ok: Any) -> dict[str, Any]:
    """The queue's lead alone; a reviewer of it is told no (403)."""
    return _roles(404, (403, "forbidden"), ok, 404)


def everyone(status: int) -> dict[str, Any]:
    """Not about the thread: the same for every role."""
    return dict.fromkeys(ROLES, status)


def _json(client: Client, method: str, url: str, body: Any = None) -> Any:
    data = json.dumps(body) if body is not None else None
    return getattr(client, method)(url, data=data, content_type="application/json")


def _tool(w: ReviewWorld) -> str:
    tool = w.thread.messages.filter(type="tool").first()
    assert tool is not None, "the review world's thread holds a search"
    return str(tool.id)


def _t(w: ReviewWorld) -> str:
    return str(w.thread.id)


# --- Web routes (by URL name) ---------------------------------------------------------------------

Request = Callable[[ReviewWorld, Client], Any]

WEB: dict[str, tuple[Request, Expect]] = {
    "web:thread-list": (lambda w, c: c.get("/"), everyone(200)),
    "web:thread-detail": (lambda w, c: c.get(f"/threads/{_t(w)}/"), read()),
    "web:thread-delete": (lambda w, c: c.get(f"/threads/{_t(w)}/delete/"), _roles(200, 403, 403, 404)),
    "web:thread-review": (lambda w, c: c.get(f"/threads/{_t(w)}/review/"), read()),
    "web:thread-verdict": (
        lambda w, c: c.post(
            f"/threads/{_t(w)}/review/verdict/",
            {"kind": "citation", "message": str(w.answer.id), "position": "1", "verdict": "supports"},
        ),
        _roles(403, 302, 302, 404),
    ),
    "web:thread-evidence": (lambda w, c: c.get(f"/threads/{_t(w)}/evidence/{w.answer.id}/1/"), read()),
    # A tool message's hits, loaded when the reader expands it: read like the page.
    "web:message-hits": (lambda w, c: c.get(f"/threads/{_t(w)}/messages/{_tool(w)}/hits/"), read()),
    "web:ask": (lambda w, c: c.get("/ask/"), everyone(200)),
    "web:message-content": (lambda w, c: c.get(f"/messages/{w.answer.id}/content/"), read()),
    # An empty form: refused before any search (422) for whoever may ask in the thread.
    "web:ask-stream": (lambda w, c: c.post("/ask/stream/", {}), everyone(422)),
    "web:thread-ask": (lambda w, c: c.post(f"/threads/{_t(w)}/ask/", {}), _roles(422, 403, 403, 404)),
    "web:thread-ask-stream": (
        lambda w, c: c.post(f"/threads/{_t(w)}/ask/stream/", {}),
        _roles(422, 403, 403, 404),
    ),
    # The collection's document page is authorized by collection (nobody here has a binding),
    # so a reviewer never reads the neighbouring pages through it: the evidence route serves them.
    "web:document-passage": (
        lambda w, c: c.get(
            "/library/passage/",
            {"collection": "c", "digest": "0" * 64, "thread": _t(w), "cite": f"cite-{w.answer.id.hex}-1"},
        ),
        everyone(404),
    ),
    # Issue 27: the queue pages are the queue's reviewers' and lead's; everyone else gets 404.
    "web:review-queues": (lambda w, c: c.get("/review/"), everyone(200)),
    "web:review-queue": (lambda w, c: c.get(f"/review/{w.queue.pk}/"), queue_read()),
    # The lead asks first and holds the overlap-1 queue's one thread: the reviewer is told so.
    "web:review-start": (lambda w, c: c.post(f"/review/{w.queue.pk}/start/"), queue_read(302)),
    # Only the lead records a final verdict (an empty form: 422 for the lead, 403 for a reviewer).
    "web:review-final": (lambda w, c: c.post(f"/review/{w.queue.pk}/final/", {}), _roles(404, 403, 422, 404)),
    "login": (lambda w, c: c.get("/accounts/login/"), everyone(200)),
    "logout": (lambda w, c: c.post("/accounts/logout/"), everyone(302)),
}

#: Every admin page answers a user without staff status with the admin's login (302).
ADMIN_PAGES: tuple[Callable[[ReviewWorld], str], ...] = (
    lambda w: "/admin/",
    lambda w: f"/admin/threads/thread/{_t(w)}/change/",
    lambda w: "/admin/review/reviewqueue/",
    lambda w: f"/admin/review/reviewqueue/{w.queue.pk}/change/",
    lambda w: "/admin/review/verdict/",
)

# --- API operations (by method and OpenAPI path) -------------------------------------------------

T = "/api/threads/{thread_id}"
Q = "/api/review/queues/{queue_id}"
API: dict[tuple[str, str], tuple[Request, Expect]] = {
    ("get", "/api/threads"): (lambda w, c: c.get("/api/threads"), everyone(200)),
    ("post", "/api/threads"): (
        lambda w, c: _json(c, "post", "/api/threads", {"title": "Mine"}),
        everyone(201),
    ),
    ("post", "/api/threads/import"): (
        lambda w, c: _json(c, "post", "/api/threads/import", [{"type": "human", "content": "hi"}]),
        everyone(201),
    ),
    ("get", T): (lambda w, c: c.get(f"/api/threads/{_t(w)}"), read()),
    # The removed reviewer's verdict is still on the thread: the owner must confirm it goes (409).
    ("delete", T): (
        lambda w, c: c.delete(f"/api/threads/{_t(w)}"),
        write((409, "verdicts_present")),
    ),
    ("post", T + "/messages"): (
        lambda w, c: _json(c, "post", f"/api/threads/{_t(w)}/messages", {"type": "human", "content": "x"}),
        write(201),
    ),
    ("get", T + "/citations"): (lambda w, c: c.get(f"/api/threads/{_t(w)}/citations"), read()),
    ("get", T + "/export"): (lambda w, c: c.get(f"/api/threads/{_t(w)}/export?format=markdown"), read()),
    ("get", T + "/export/markdown"): (lambda w, c: c.get(f"/api/threads/{_t(w)}/export/markdown"), read()),
    # The owner has no binding to ask through (its own 403, ask_binding); the reviewer may not ask.
    ("post", T + "/ask"): (
        lambda w, c: _json(c, "post", f"/api/threads/{_t(w)}/ask", {"question": "Why?", "binding": "none"}),
        write((403, "ask_binding")),
    ),
    ("get", T + "/review"): (lambda w, c: c.get(f"/api/threads/{_t(w)}/review"), read()),
    ("put", T + "/review/citations/{message_id}/{n}"): (
        lambda w, c: _json(
            c, "put", f"/api/threads/{_t(w)}/review/citations/{w.answer.id}/1", {"verdict": "supports"}
        ),
        judge(200),
    ),
    ("put", T + "/review/answers/{message_id}"): (
        lambda w, c: _json(
            c, "put", f"/api/threads/{_t(w)}/review/answers/{w.answer.id}", {"verdict": "acceptable"}
        ),
        judge(200),
    ),
    # Issue 27: review queues.
    ("get", "/api/review/queues"): (lambda w, c: c.get("/api/review/queues"), everyone(200)),
    # The lead asks first and holds the overlap-1 queue's one thread: nothing left for the reviewer.
    ("post", Q + "/next"): (
        lambda w, c: c.post(f"/api/review/queues/{w.queue.pk}/next"),
        queue_read(200, 204),
    ),
    ("get", Q + "/agreement"): (
        lambda w, c: c.get(f"/api/review/queues/{w.queue.pk}/agreement"),
        queue_read(),
    ),
    ("get", Q + "/export"): (lambda w, c: c.get(f"/api/review/queues/{w.queue.pk}/export"), queue_read()),
    # Nothing is disputed: the lead is told so (422); a reviewer may not settle anything (403).
    ("post", Q + "/final-verdicts"): (
        lambda w, c: _json(
            c,
            "post",
            f"/api/review/queues/{w.queue.pk}/final-verdicts",
            {"message_id": str(w.answer.id), "kind": "citation", "position": 1, "verdict": "supports"},
        ),
        queue_lead((422, "invalid_request")),
    ),
    ("get", "/api/knowledge/capabilities"): (
        lambda w, c: c.get("/api/knowledge/capabilities"),
        everyone(200),
    ),
    # Searching *into* a thread appends to it: the owner has no binding (403 binding_unavailable).
    ("post", "/api/knowledge/search"): (
        lambda w, c: _json(
            c, "post", "/api/knowledge/search", {"tool": "knowledge_search", "query": "q", "thread_id": _t(w)}
        ),
        write((403, "binding_unavailable")),
    ),
}
#: The API's own pages, in the URLconf but not operations of the document.
API_PAGES: dict[str, tuple[Request, Expect]] = {
    "api:openapi-json": (lambda w, c: c.get("/api/openapi.json"), everyone(200)),
    "api:openapi-view": (lambda w, c: c.get("/api/docs"), everyone(200)),
    "api:api-root": (lambda w, c: c.get("/api/"), everyone(404)),
}

# --- MCP tools ------------------------------------------------------------------------------------

Tool = Callable[[ReviewWorld], dict[str, Any]]
MCP: dict[str, tuple[Tool, Expect]] = {
    "knowledge_search": (lambda w: {"query": "q", "thread_id": _t(w)}, write((403, "binding_unavailable"))),
    "entity_relations_search": (
        lambda w: {"query": "q", "thread_id": _t(w)},
        write((403, "binding_unavailable")),
    ),
    "create_thread": (lambda w: {"title": "Mine"}, everyone(201)),
    "append_answer": (lambda w: {"thread_id": _t(w), "content": "An answer."}, write(201)),
    "record_question": (lambda w: {"thread_id": _t(w), "content": "A question?"}, write(201)),
    "citation_report": (lambda w: {"thread_id": _t(w)}, read()),
}


def _web_route_names() -> set[str]:
    names: set[str] = set()

    def walk(patterns: list[Any], namespace: str | None) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, pattern.namespace or namespace)
            elif isinstance(pattern, URLPattern) and pattern.name:
                names.add(f"{namespace}:{pattern.name}" if namespace else pattern.name)

    walk(get_resolver().url_patterns, None)
    return names


def _api_operations() -> set[tuple[str, str]]:
    paths = api.get_openapi_schema()["paths"]
    return {(method, path) for path, ops in paths.items() for method in ops if method != "parameters"}


def test_every_route_has_a_row() -> None:
    names = _web_route_names()
    admin = {n for n in names if n.startswith("admin:")}
    api_ops = {n for n in names if n.startswith("api:")} - set(API_PAGES)
    assert admin, "the admin's routes are covered by ADMIN_PAGES"
    assert names - admin - api_ops == set(WEB) | set(API_PAGES)
    assert _api_operations() == set(API)
    assert set(TOOLS_BY_NAME) == set(MCP)


@pytest.fixture
def world() -> ReviewWorld:
    world = review_world()
    # The removed reviewer judged once before leaving the queue: judging never keeps access.
    verdict_record(
        reviewer=world.removed,
        thread_id=world.thread.id,
        message_id=world.answer.id,
        kind="citation",
        position=2,
        value="cant_tell",
    )
    remove_reviewer(world)
    return world


def _outcome(response: Any, expected: int | tuple[int, str]) -> int | tuple[int, str]:
    if isinstance(expected, tuple):
        body = response.json() if response.get("Content-Type", "").startswith("application/json") else {}
        return (response.status_code, body.get("code", ""))
    return int(response.status_code)


def _check(world: ReviewWorld, request: Request, expect: Expect) -> None:
    got = {}
    for role in ORDER:
        response = request(world, logged_in(world.user(role)))
        got[role] = _outcome(response, expect[role])
    assert got == dict(expect)


@pytest.mark.parametrize("name", sorted(WEB))
def test_web_route(world: ReviewWorld, name: str) -> None:
    request, expect = WEB[name]
    _check(world, request, expect)


@pytest.mark.parametrize("name", sorted(API_PAGES))
def test_api_page(world: ReviewWorld, name: str) -> None:
    request, expect = API_PAGES[name]
    _check(world, request, expect)


@pytest.mark.parametrize("operation", sorted(API), ids=lambda op: f"{op[0].upper()} {op[1]}")
def test_api_operation(world: ReviewWorld, operation: tuple[str, str]) -> None:
    request, expect = API[operation]
    _check(world, request, expect)


def test_admin_pages_refuse_every_role_without_staff(world: ReviewWorld) -> None:
    for page in ADMIN_PAGES:
        for role in ORDER:
            response = logged_in(world.user(role)).get(page(world))
            assert response.status_code == 302, (page(world), role)
            assert response["Location"].startswith("/admin/login/")


def _constant(caller: Caller) -> Callable[[], Caller]:
    return lambda: caller


@pytest.mark.parametrize("name", sorted(MCP))
def test_mcp_tool(world: ReviewWorld, name: str) -> None:
    arguments, expect = MCP[name]
    got = {}
    for role in ORDER:
        caller = Caller(user=world.user(role), token_key=f"key-{role}", agent_name="")
        result = tool_call(caller=_constant(caller), name=name, arguments=arguments(world))
        wanted = expect[role]
        got[role] = (
            (result.status, result.structured.get("code", "")) if isinstance(wanted, tuple) else result.status
        )
    assert got == dict(expect)


def test_nothing_was_judged_by_those_refused(world: ReviewWorld) -> None:
    # Only the removed reviewer's verdict (recorded before removal) exists after refusals.
    for role in ("owner", "other_reviewer", "removed", "outsider"):
        request, _ = API[("put", T + "/review/citations/{message_id}/{n}")]
        request(world, logged_in(world.user(role)))
    assert list(Verdict.objects.values_list("reviewer__username", flat=True)) == ["removed"]
