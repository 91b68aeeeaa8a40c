"""Reads never write: every GET route and every read-only MCP tool, over renders an older
renderer made, writes nothing to the database but the API token's ``last_used_at``.

The routes are enumerated, not listed by hand: every pattern of the URLconf (the pages, the
admin, the API as mounted) is requested with GET, and the API router's own GET operations
(its OpenAPI document) must all be among them, so a new read route is covered the day it
is added. Two deploys are seeded: one whose renders are merely older (served as stored) and
one whose renders are below the minimum safe version (rendered in memory for each read),
with one message whose render is missing altogether.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import URLPattern, URLResolver, get_resolver

from knowledgeweb.accounts.models import ApiToken
from knowledgeweb.accounts.services import token_create
from knowledgeweb.api.main import api
from knowledgeweb.demo.services import demo_run
from knowledgeweb.library.models import Chunk
from knowledgeweb.mcp_server.identity import caller_authenticate
from knowledgeweb.mcp_server.tools import TOOLS, tool_call
from knowledgeweb.threads.models import Message, MessageRender, Thread
from knowledgeweb.threads.rendering import version
from knowledgeweb.threads.rendering.pipeline import render_counter
from knowledgeweb.threads.selectors import thread_outline, thread_renders
from tests.renderers import renderer_changed

#: The running renderer's version: a "changed renderer" is the next one.
V = version.RENDERER_VERSION

pytestmark = pytest.mark.django_db

#: The one write a read may make: when an API token was last used (at most once a minute).
_TOKEN_TABLE = re.escape(f'"{ApiToken._meta.db_table}"')
_TOKEN_USE = re.compile(
    rf'^UPDATE {_TOKEN_TABLE} SET "last_used_at" = [^,]+ WHERE {_TOKEN_TABLE}\."id" = \d+$'  # noqa: S608 - a pattern to match
)
_WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Seeded:
    owner: User
    admin: User
    token: str
    thread: Thread
    tool_message: Message
    chunk: Chunk


@pytest.fixture
def seeded() -> Seeded:
    result = demo_run()
    owner = result.user
    admin = User.objects.create_superuser("root", password="root-password-1")
    _, token = token_create(user=owner, name="reads")
    thread = Thread.objects.filter(owner=owner).order_by("created_at").first()
    assert thread is not None
    tool_message = thread.messages.filter(type="tool").order_by("seq").first()
    assert tool_message is not None
    # A human message written before renders were stored: it has none at all.
    human = thread.messages.filter(type="human").order_by("seq").first()
    assert human is not None
    MessageRender.objects.filter(message=human).delete()
    chunk = Chunk.objects.select_related("document__collection").first()
    assert chunk is not None
    return Seeded(owner, admin, token, thread, tool_message, chunk)


def _patterns(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _patterns(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern), pattern


def _admin_object(route: str) -> str:
    match = re.match(r"admin/(\w+)/(\w+)/", route)
    assert match is not None, route
    model = apps.get_model(match.group(1), match.group(2))
    first = model._default_manager.order_by("pk").first()
    return str(first.pk) if first is not None else "0"


def _urls(route: str, seeded: Seeded) -> list[str]:
    """The concrete URLs a GET of ``route`` is tried with (with the query its view reads)."""
    if route.startswith("admin/^"):  # the admin's app index: one URL per app
        labels = re.search(r"\(\?P<app_label>([^)]*)\)", route)
        assert labels is not None
        return [f"/admin/{label}/" for label in labels.group(1).split("|")]
    if route == "admin/(?P<url>.*)$":  # the admin's catch-all
        return ["/admin/no-such-page/"]
    thread_type = apps.get_model("threads", "thread")
    filled = (
        route.replace("<uuid:thread_id>", str(seeded.thread.id))
        .replace("<thread_id>", str(seeded.thread.id))
        .replace("<uuid:message_id>", str(seeded.tool_message.id))
        .replace("<message_id>", str(seeded.tool_message.id))
        .replace("<int:n>", "1")
        .replace("<int:queue_id>", "1")
        .replace("<queue_id>", "1")
        .replace("<n>", "1")
        .replace("<id>", str(seeded.admin.pk))
        .replace(
            "<path:content_type_id>/<path:object_id>",
            f"{apps.get_model('contenttypes', 'contenttype').objects.get_for_model(thread_type).pk}/"
            f"{seeded.thread.id}",
        )
    )
    if "<path:object_id>" in filled:
        filled = filled.replace("<path:object_id>", _admin_object(route))
    assert "<" not in filled, f"no value for a parameter of {route!r}"
    url = "/" + filled
    queries = {
        "/": ["", "?q=Lincoln"],
        "/api/threads": ["", "?search=Lincoln", "?limit=1"],
        f"/api/threads/{seeded.thread.id}/export": ["?format=json", "?format=markdown"],
        "/library/passage/": [
            f"?collection={seeded.chunk.document.collection.name}&digest={seeded.chunk.text_digest}"
        ],
        "/admin/threads/thread/": ["", "?q=Demo"],
    }
    return [url + query for query in queries.get(url, [""])]


def _writes(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if _WRITE.match(q["sql"])]


@pytest.mark.parametrize("deploy", ["older renderer", "below the minimum safe version"])
def test_no_get_route_and_no_read_tool_writes_to_the_database(
    deploy: str, seeded: Seeded, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = sorted(MessageRender.objects.values_list("message_id", "renderer_version", "html"))
    if deploy == "older renderer":
        renderer_changed(monkeypatch, to=V + 1)
    else:
        renderer_changed(monkeypatch, to=V + 1, min_safe=V + 1)
    pages, admin, bearer = Client(), Client(), Client(HTTP_AUTHORIZATION=f"Bearer {seeded.token}")
    pages.force_login(seeded.owner)
    admin.force_login(seeded.admin)
    render_counter.reset()

    requested: list[str] = []
    offending: dict[str, list[str]] = {}
    token_writes = 0
    for route, _ in _patterns(get_resolver().url_patterns):
        client = admin if route.startswith("admin/") else bearer if route.startswith("api/") else pages
        for url in _urls(route, seeded):
            with CaptureQueriesContext(connection) as queries:
                response = client.get(url)
            assert response.status_code < 500, f"GET {url} answered {response.status_code}"
            requested.append(url.partition("?")[0])
            writes = _writes(queries)
            token_writes += sum(1 for sql in writes if _TOKEN_USE.match(sql))
            if others := [sql for sql in writes if not _TOKEN_USE.match(sql)]:
                offending[url] = others

    read_tools = [tool for tool in TOOLS if tool.read_only]
    assert [tool.name for tool in read_tools] == ["citation_report"]
    for tool in read_tools:
        for thread in Thread.objects.filter(owner=seeded.owner):
            with CaptureQueriesContext(connection) as queries:
                result = tool_call(
                    caller=lambda: caller_authenticate(raw_token=seeded.token, agent_name="reader"),
                    name=tool.name,
                    arguments={"thread_id": str(thread.id)},
                )
            assert not result.is_error, result.text
            writes = _writes(queries)
            token_writes += sum(1 for sql in writes if _TOKEN_USE.match(sql))
            if others := [sql for sql in writes if not _TOKEN_USE.match(sql)]:
                offending[f"mcp {tool.name} {thread.id}"] = others

    assert offending == {}
    assert token_writes >= 1  # the token was used: its one allowed write is the only one seen
    # Every GET the API router declares was requested (the URLconf walk did not miss one).
    declared = {
        re.sub(r"\{(\w+)\}", lambda m: "1" if m.group(1) == "queue_id" else str(seeded.thread.id), path)
        for path, operations in api.get_openapi_schema()["paths"].items()
        if "get" in operations
    }
    assert declared
    assert declared <= set(requested)
    assert len(set(requested)) > 60
    # The renders are exactly as seeded: nothing was re-rendered into the database.
    assert sorted(MessageRender.objects.values_list("message_id", "renderer_version", "html")) == stored
    # Below the minimum safe version every read rendered in memory; otherwise only the
    # message without a render was.
    if deploy == "older renderer":
        assert render_counter.count == 0
    else:
        assert render_counter.count > 0


def test_renders_below_the_minimum_safe_version_are_made_again_in_memory_exactly(
    seeded: Seeded, monkeypatch: pytest.MonkeyPatch
) -> None:
    messages = thread_outline(thread=seeded.thread)
    stored = thread_renders(thread=seeded.thread, messages=messages)
    pages = Client()
    pages.force_login(seeded.owner)
    url = f"/threads/{seeded.thread.id}/"
    page = pages.get(url).content.decode()
    renderer_changed(monkeypatch, to=V + 1, min_safe=V + 1)

    made = thread_renders(thread=seeded.thread, messages=messages)
    shown = pages.get(url).content.decode()

    assert {row.renderer_version for row in made.values()} == {V + 1}
    fields = ("html", "citations", "sources", "entries", "export")
    for message in messages:
        assert [getattr(made[message.id], f) for f in fields] == [
            getattr(stored[message.id], f) for f in fields
        ]
    # The page shows the same answers and sources (the order of uncited sources is the stored
    # JSON object's, which PostgreSQL does not keep: compared as a set).
    for hook in (r'data-citation="\w+"', r'data-source-id="\w+"'):
        assert sorted(re.findall(hook, shown)) == sorted(re.findall(hook, page))
    assert 'data-citation="resolved"' in shown
