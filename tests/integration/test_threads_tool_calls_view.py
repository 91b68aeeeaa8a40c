"""Tool calls and non-text parts: shown in the viewer, linked to their answers, exported, inert."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from markdown_it import MarkdownIt

from knowledgeweb.threads.interchange.imports import thread_import_body
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.rendering.pipeline import render_counter
from knowledgeweb.threads.selectors import thread_messages
from knowledgeweb.threads.services import message_append
from tests.frameworks import EXCERPT, QUERY, anthropic_request, openai_messages
from tests.pages import with_hits

pytestmark = pytest.mark.django_db

IMG = '<img src=x onerror="alert(1)">'
SCRIPT = "<script>alert(document.cookie)</script>"
LINK = "[click](javascript:alert(1))"


class _Page(HTMLParser):
    """Start tags with attributes, and the text inside each element with a given class."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def page(user: User, thread: Thread) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(f"/threads/{thread.id}/")
    assert response.status_code == 200
    return with_hits(client, response.content.decode())


def tags(text: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Page()
    parser.feed(text)
    return parser.tags


def texts_of(text: str, css_class: str) -> list[str]:
    found = re.findall(rf'<span class="{css_class}">(.*?)</span>', text, re.DOTALL)
    return [html.unescape(t) for t in found]


def test_a_call_is_shown_in_words_and_links_to_the_tool_message_that_answered_it(user: User) -> None:
    thread = thread_import_body(owner=user, body=anthropic_request())
    text = page(user, thread)
    assert texts_of(text, "tool-call-text") == [f"called knowledge_search with query '{QUERY}'"]
    tool = thread_messages(thread=thread)[3]
    (link,) = [a for tag, a in tags(text) if tag == "a" and a.get("class") == "tool-call-answer"]
    assert link["href"] == f"#message-{tool.id}"
    (target,) = [a for tag, a in tags(text) if a.get("id") == f"message-{tool.id}"]
    assert (target["data-message-type"], target["data-seq"]) == ("tool", "4")
    assert EXCERPT in text


def test_parts_are_collapsed_and_images_are_placeholders_never_fetched(user: User) -> None:
    messages = openai_messages()
    messages[1]["content"].append({"type": "image_url", "image_url": {"url": "data:image/gif;base64,R0lGOD"}})
    thread = thread_import_body(owner=user, body=[*messages, *anthropic_request()["messages"][1:2]])
    text = page(user, thread)
    parts = [a for tag, a in tags(text) if tag == "details" and a.get("class") == "message-part"]
    assert [a["data-part"] for a in parts] == ["image", "image", "thinking"]
    assert not [a for a in parts if "open" in a]
    assert "Image (unknown type), not shown" in text
    assert "Image (image/gif), not shown" in text
    assert not [t for t, _ in tags(text) if t in ("img", "picture", "source", "video", "audio")]
    # The URL a message named is text, never a link or a fetch.
    assert "https://example.com/chart.png" in text
    assert not [a for _, a in tags(text) for v in a.values() if v and "example.com" in v]
    assert "R0lGOD" not in text


def test_an_unanswered_call_says_so_and_a_later_answer_links_it_without_a_stale_page(
    user: User, thread: Thread
) -> None:
    message_append(
        thread=thread,
        type="ai",
        content="",
        tool_calls=[{"id": "c9", "name": "knowledge_search", "args": {"query": "late"}}],
    )
    assert "no result in this thread" in page(user, thread)
    tool = message_append(thread=thread, type="tool", name="knowledge_search", tool_call_id="c9", content="x")
    render_counter.reset()
    text = page(user, thread)
    assert f'href="#message-{tool.id}"' in text
    assert "no result in this thread" not in text
    # The AI message's body stored at write was reused: the page rendered no Markdown.
    assert render_counter.count == 0


def test_a_reused_call_id_links_each_call_to_its_own_answer(user: User) -> None:
    call = {"id": "call_0", "type": "function", "function": {"name": "search", "arguments": "{}"}}
    body = [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_0", "content": "first"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_0", "content": "second"},
    ]
    thread = thread_import_body(owner=user, body=body, title="reused")
    stored = thread_messages(thread=thread)
    hrefs = [a["href"] for tag, a in tags(page(user, thread)) if a.get("class") == "tool-call-answer"]
    assert hrefs == [f"#message-{stored[1].id}", f"#message-{stored[3].id}"]


def hostile_body() -> list[dict[str, Any]]:
    hostile_call = {
        "type": "tool_use",
        "id": 'x" onmouseover="alert(1)',
        "name": f"{SCRIPT}{LINK}",
        "input": {IMG: f"{LINK} <a href='javascript:alert(1)'>x</a>", "n": [SCRIPT]},
    }
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "q"},
                {
                    "type": "image",
                    "source": {"type": "url", "url": f"https://x.test/{IMG}"},
                    "media_type": SCRIPT,
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": f"{SCRIPT} {IMG} {LINK}"},
                {"type": "refusal", "refusal": f"</details>{SCRIPT}"},
                {"type": f"{IMG}"},
                hostile_call,
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": hostile_call["id"], "content": IMG}],
        },
    ]


def test_hostile_tool_names_arguments_ids_and_parts_render_as_inert_text(user: User) -> None:
    thread = thread_import_body(owner=user, body=hostile_body(), title="hostile")
    text = page(user, thread)
    parsed = tags(text)
    assert {tag for tag, _ in parsed}.isdisjoint({"img", "svg", "iframe", "object", "embed", "style"})
    assert [a.get("src") for tag, a in parsed if tag == "script"] == [
        "/static/knowledgeweb/walk.js",
        "/static/knowledgeweb/citations.js",
        "/static/knowledgeweb/windows.js",
    ]
    assert not [name for _, attrs in parsed for name in attrs if name.lower().startswith("on")]
    hrefs = [a.get("href") or "" for tag, a in parsed if tag == "a"]
    assert not [h for h in hrefs if "javascript" in h.lower() or "x.test" in h]
    # Every caller value is there, as text.
    (sentence,) = texts_of(text, "tool-call-text")
    assert sentence.startswith(f"called {SCRIPT}{LINK} with {IMG} '")
    assert html.escape(SCRIPT) in text or "&lt;script&gt;" in text
    # The call still links to its answer, by the server's id only.
    tool = thread_messages(thread=thread)[2]
    assert [a["href"] for _, a in parsed if a.get("class") == "tool-call-answer"] == [f"#message-{tool.id}"]


def test_hostile_calls_and_parts_stay_inert_in_the_markdown_export(api_client: Client) -> None:
    response = api_client.post(
        "/api/threads/import", json.dumps(hostile_body()), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    markdown = api_client.get(f"/api/threads/{response.json()['id']}/export?format=markdown").content.decode()
    tokens = MarkdownIt("commonmark").parse(markdown)
    inline = [child for token in tokens for child in (token.children or [])]
    assert not [t for t in inline if t.type in ("link_open", "image", "html_inline")]
    assert not [t for t in tokens if t.type == "html_block"]
    assert "called \\<script\\>" in markdown


def test_the_exports_carry_tool_calls_and_parts(api_client: Client, user: User) -> None:
    thread = thread_import_body(owner=user, body=anthropic_request())
    exported = json.loads(api_client.get(f"/api/threads/{thread.id}/export?format=json").content)
    call = exported["messages"][2]
    assert call["tool_calls"] == [{"id": "toolu_01A", "name": "knowledge_search", "args": {"query": QUERY}}]
    assert call["parts"] == [{"type": "thinking", "text": "I should search first."}]
    detail = api_client.get(f"/api/threads/{thread.id}").json()["messages"][2]
    assert (detail["tool_calls"], detail["parts"]) == (call["tool_calls"], call["parts"])
    markdown = api_client.get(f"/api/threads/{thread.id}/export?format=markdown").content.decode()
    assert (
        f"- Tool call: called knowledge\\_search with query '{QUERY}' (call toolu\\_01A), answered in message 4."
        in markdown
    )
    assert '  ```json\n  {\n    "query": "citation verification"\n  }\n  ```' in markdown
    assert "- Thinking\n\n  ```text\n  I should search first.\n  ```" in markdown
    assert "- Image \\(image/png\\), not shown" in markdown
