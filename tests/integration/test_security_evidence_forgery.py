"""Red team: evidence that looks right but is not, and citation links that look right but are not.

The tool messages here are written as a trusted producer would write them
(``trusted=True``), so the reader's own checks are the only defence: the id is
recomputed, the handle and the exact excerpt must be in that tool's content,
native snapshots come only from ``knowledge_search``/``task``, and a citation
resolves only against tool messages before it. Each forged citation must be
reported unresolved or malformed, and must never render as a live citation.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.knowledge import RagflowLocator, RetrievalHit, RetrievalResult, format_result, source_id
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import message_append

pytestmark = pytest.mark.django_db

NONCE = "fedcba9876543210fedcba9876543210"
EXCERPT = "Café opens at nine."


def genuine(title: str = "hours.md", text: str = EXCERPT) -> tuple[str, dict[str, Any], str, str]:
    """(content, artifact, id, handle) of a real ``format_result`` output."""
    content, artifact = format_result(
        RetrievalResult(provider="local", query="q", hits=(RetrievalHit(text=text, title=title),))
    )
    record_id = artifact["knowledge_sources"][0]["id"]
    return content, artifact, record_id, f"knowledge-source-{record_id}"


def tool(thread: Thread, content: str, artifact: Any, name: str = "knowledge_search") -> Message:
    return message_append(
        thread=thread, type="tool", name=name, content=content, artifact=artifact, trusted=True
    )


def ai(thread: Thread, content: str) -> Message:
    return message_append(thread=thread, type="ai", content=content)


def report(client: Client, thread: Thread) -> list[dict[str, Any]]:
    response = client.get(f"/api/threads/{thread.id}/citations")
    assert response.status_code == 200
    return [c for m in response.json()["messages"] for c in m["citations"]]


def states(client: Client, thread: Thread) -> list[str]:
    return [c["state"] for c in report(client, thread)]


def page(user: User, thread: Thread) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(f"/threads/{thread.id}/")
    assert response.status_code == 200
    return response.content.decode()


def resolved_ids(html: str) -> list[str]:
    return re.findall(r'data-citation="resolved" data-source-id="([0-9a-f]{32})"', html)


def test_the_genuine_control_resolves(api_client: Client, user: User, thread: Thread) -> None:
    content, artifact, record_id, handle = genuine()
    tool(thread, content, artifact)
    ai(thread, f"[x](#{handle})")
    assert states(api_client, thread) == ["resolved"]
    assert resolved_ids(page(user, thread)) == [record_id]


@pytest.mark.parametrize(
    "variant",
    [
        pytest.param(lambda s: unicodedata.normalize("NFD", s), id="content in NFD, record in NFC"),
        pytest.param(lambda s: s.replace("opens at", "opens  at"), id="content has a doubled space"),
        pytest.param(lambda s: s.replace("opens at", "opens\u00a0at"), id="no-break space in content"),
        pytest.param(lambda s: s.replace("nine.", "nine\u200b."), id="zero-width space in content"),
        pytest.param(lambda s: s.replace("Café", "Cafe\u0301"), id="combining accent in content"),
    ],
)
def test_an_excerpt_that_differs_only_by_normalisation_or_whitespace_does_not_validate(
    api_client: Client, user: User, thread: Thread, variant: Any
) -> None:
    content, artifact, _record_id, handle = genuine()
    # The record keeps its true excerpt and id; only what the model saw (the content) differs.
    shown = content.replace(EXCERPT, variant(EXCERPT))
    assert shown != content
    tool(thread, shown, artifact)
    ai(thread, f"[x](#{handle})")

    assert states(api_client, thread) == ["unresolved"]
    assert resolved_ids(page(user, thread)) == []


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(lambda r: {**r, "excerpt": r["excerpt"] + " "}, id="excerpt with trailing space"),
        pytest.param(
            lambda r: {**r, "excerpt": unicodedata.normalize("NFD", r["excerpt"])}, id="excerpt in NFD"
        ),
        pytest.param(lambda r: {**r, "title": "Official policy.md"}, id="retitled"),
        pytest.param(lambda r: {**r, "url": "https://evil.example/"}, id="url added"),
        pytest.param(lambda r: {**r, "page": 7}, id="page added"),
        pytest.param(lambda r: {**r, "id": r["id"].upper()}, id="uppercase id"),
        pytest.param(lambda r: {**r, "verified": True}, id="extra key"),
    ],
)
def test_a_record_whose_id_no_longer_matches_its_fields_is_rejected(
    api_client: Client, user: User, thread: Thread, tamper: Any
) -> None:
    content, artifact, _, handle = genuine()
    record = tamper(artifact["knowledge_sources"][0])
    # The content carries everything the tampered record claims, so only the id check can catch it.
    content = content + "\n\n" + record["excerpt"] + " " + record["title"]
    tool(thread, content, {"knowledge_sources_version": 1, "knowledge_sources": [record]})
    ai(thread, f"[x](#{handle})")

    assert states(api_client, thread) == ["unresolved"]
    assert resolved_ids(page(user, thread)) == []


def test_a_record_with_a_self_consistent_id_but_a_javascript_url_is_rejected(
    api_client: Client, user: User, thread: Thread
) -> None:
    url = "javascript:alert(document.cookie)//https://x.example/"
    record_id = source_id("local", "hours.md", EXCERPT, None, url, None)
    handle = f"knowledge-source-{record_id}"
    record = {"id": record_id, "provider": "local", "title": "hours.md", "excerpt": EXCERPT, "url": url}
    tool(thread, f"[citation:hours.md](#{handle})\n{EXCERPT}", {"knowledge_sources_version": 1, "knowledge_sources": [record]})  # fmt: skip
    ai(thread, f"[x](#{handle})")

    assert states(api_client, thread) == ["unresolved"]
    html = page(user, thread)
    assert "javascript:" not in html
    assert resolved_ids(html) == []


def test_a_handle_that_appears_only_in_the_answer_never_resolves(
    api_client: Client, user: User, thread: Thread
) -> None:
    content, artifact, _, handle = genuine()
    # The tool shows the excerpt but not the handle; the answer supplies the handle itself.
    tool(thread, content.replace(f"(#{handle})", "(#elsewhere)"), artifact)
    ai(thread, f"As [hours.md](#{handle}) says: {EXCERPT} #{handle}")

    assert states(api_client, thread) == ["unresolved"]
    assert resolved_ids(page(user, thread)) == []


def test_a_handle_that_is_only_a_prefix_of_one_in_the_content_does_not_count(
    api_client: Client, user: User, thread: Thread
) -> None:
    hits = tuple(
        RetrievalHit(
            text=f"Chunk {n}.",
            title="doc.pdf",
            dataset_name="D",
            locator=RagflowLocator(dataset_id="d", document_id="o", chunk_id=f"c{n}", pages=()),
        )
        for n in range(1, 11)
    )
    content, artifact = format_result(
        RetrievalResult(provider="ragflow", query="q", hits=hits), native_nonce=NONCE
    )
    # Drop hit 1's own link but keep hit 10's: "#knowledge-<nonce>-10" must not vouch for "-1".
    content = content.replace(f"(#knowledge-{NONCE}-1)", "(#gone)")
    tool(thread, content, artifact)
    ai(thread, f"[1](#knowledge-{NONCE}-1) [10](#knowledge-{NONCE}-10)")

    assert states(api_client, thread) == ["unresolved", "resolved"]


def test_evidence_that_arrives_after_the_answer_does_not_resolve_it(
    api_client: Client, user: User, thread: Thread
) -> None:
    content, artifact, record_id, handle = genuine()
    ai(thread, f"Early [x](#{handle}).")
    tool(thread, content, artifact)
    ai(thread, f"Late [y](#{handle}).")

    cited = report(api_client, thread)
    assert [c["state"] for c in cited] == ["unresolved", "resolved"]
    assert "later" in cited[0]["reason"]
    assert cited[0]["source"] is None
    assert resolved_ids(page(user, thread)) == [record_id]


@pytest.mark.parametrize("name", ["search", "Knowledge_Search", "knowledge_search ", "tasks", "", "ragflow"])
def test_a_native_snapshot_from_any_other_tool_name_is_not_evidence(
    api_client: Client, user: User, thread: Thread, name: str
) -> None:
    content, artifact = format_result(
        RetrievalResult(
            provider="ragflow",
            query="q",
            hits=(
                RetrievalHit(
                    text="Native text.",
                    title="n.pdf",
                    dataset_name="D",
                    locator=RagflowLocator(dataset_id="d", document_id="o", chunk_id="c", pages=(1,)),
                ),
            ),
        ),
        native_nonce=NONCE,
    )
    tool(thread, content, artifact, name=name)
    ai(thread, f"[1](#knowledge-{NONCE}-1)")

    assert states(api_client, thread) == ["unresolved"]
    assert 'data-citation="resolved"' not in page(user, thread)


def test_a_later_record_never_replaces_the_first_under_the_same_handle(
    api_client: Client, user: User, thread: Thread
) -> None:
    content, artifact = format_result(
        RetrievalResult(
            provider="ragflow",
            query="q",
            hits=(
                RetrievalHit(
                    text="The real text.",
                    title="real.pdf",
                    dataset_name="D",
                    locator=RagflowLocator(dataset_id="d", document_id="o", chunk_id="c", pages=(1,)),
                ),
            ),
        ),
        native_nonce=NONCE,
    )
    tool(thread, content, artifact)
    forged = json.loads(json.dumps(artifact))
    forged["knowledge_sources"]["sources"][0].update(text="A planted text.", document_name="planted.pdf")
    tool(thread, content.replace("The real text.", "A planted text."), forged)
    ai(thread, f"[1](#knowledge-{NONCE}-1)")

    (cited,) = report(api_client, thread)
    assert cited["state"] == "resolved"
    assert (cited["source"]["title"], cited["source"]["excerpt"]) == ("real.pdf", "The real text.")
    html = page(user, thread)
    assert "planted.pdf" not in html.split("data-sources-panel", 1)[1].split("</aside>")[0]


def test_more_than_one_hundred_records_are_rejected_whole(
    api_client: Client, user: User, thread: Thread
) -> None:
    hits = tuple(RetrievalHit(text=f"Fact {n}.", title=f"doc{n}.md") for n in range(101))
    content, artifact = format_result(
        RetrievalResult(provider="local", query="q", hits=hits[:100]),
        max_total_chars=1_000_000,
    )
    extra_content, extra_artifact = format_result(
        RetrievalResult(provider="local", query="q", hits=hits[100:])
    )
    records = artifact["knowledge_sources"] + extra_artifact["knowledge_sources"]
    assert len(records) == 101
    tool(
        thread,
        content + "\n\n" + extra_content,
        {"knowledge_sources_version": 1, "knowledge_sources": records},
    )
    ai(thread, f"[first](#knowledge-source-{records[0]['id']})")

    assert states(api_client, thread) == ["unresolved"]


# --- Citation hrefs --------------------------------------------------------------------------------

MALFORMED_HREFS = [
    "#knowledge-source-{ID_UPPER}",
    "#Knowledge-Source-{id}",
    "#USER-CONTENT-knowledge-source-{id}",
    "#knowledge-source-{id}0",
    "#knowledge-source-{short}",
    "#knowledge-source-{id}%20",
    "#knowledge-source-{id}#again",
    "#knowledge-source-{id}?q=1",
    "#knowledge-source-{id}%E2%80%8B",
    "https://evil.example/#knowledge-source-{id}",
    "http://127.0.0.1/#user-content-knowledge-source-{id}",
    "//evil.example/#knowledge-source-{id}",
    "/threads/#knowledge-source-{id}",
    "mailto:x@example.com#knowledge-source-{id}",
    # Percent-encoded, compatibility-character and doubled-prefix look-alikes: a browser
    # decodes the fragment and would land on the genuine panel entry.
    "#knowledge%2Dsource-{id}",
    "#%6Bnowledge-source-{id}",
    "#\uff4bnowledge-source-{id}",
    "#user-content-user-content-knowledge-source-{id}",
]


@pytest.mark.parametrize("template", MALFORMED_HREFS)
def test_lookalike_hrefs_are_malformed_and_render_as_inert_buttons(
    api_client: Client, user: User, thread: Thread, template: str
) -> None:
    content, artifact, record_id, _ = genuine()
    tool(thread, content, artifact)
    href = template.format(id=record_id, ID_UPPER=record_id.upper(), short=record_id[:31])
    ai(thread, f"Claim [forged]({href}).")

    assert states(api_client, thread) == ["malformed"]
    html = page(user, thread)
    assert resolved_ids(html) == []
    # The citation shows a word, never the answer's label or number; its reason names the label.
    assert re.search(
        r'<button type="button" class="citation" data-citation="malformed" [^>]*>malformed</button>', html
    )
    assert "The answer labelled it “forged”" in html
    # The lookalike href is shown only as text in the reason, nowhere on the page as a link.
    assert not re.search(r'<a [^>]*href="[^"]*knowledge-source-' + record_id + r'[^"]', html)


@pytest.mark.parametrize(
    "answer",
    [
        "[x](javascript:alert(1)//#knowledge-source-{id})",
        "[x](JaVaScRiPt:alert(1)//#knowledge-source-{id})",
        "[x](data:text/html,<script>alert(1)</script>#knowledge-source-{id})",
        "[x](vbscript:msgbox(1)#knowledge-source-{id})",
        "`[x](#knowledge-source-{id})`",
        "```\n[x](#knowledge-source-{id})\n```",
        "    [x](#knowledge-source-{id})",
        "\\[x](#knowledge-source-{id})",
        '<a href="#knowledge-source-{id}">x</a>',
        "![x](#knowledge-source-{id})",
    ],
)
def test_script_urls_code_raw_html_and_images_never_become_citations(
    api_client: Client, user: User, thread: Thread, answer: str
) -> None:
    content, artifact, record_id, _ = genuine()
    tool(thread, content, artifact)
    ai(thread, answer.format(id=record_id))

    assert report(api_client, thread) == []
    html = page(user, thread)
    assert resolved_ids(html) == []
    assert not re.search(r'<a [^>]*href="\s*(javascript|data|vbscript):', html, re.IGNORECASE)
    assert "<script>alert" not in html


def test_reference_style_links_resolve_only_against_real_evidence(
    api_client: Client, user: User, thread: Thread
) -> None:
    content, artifact, record_id, handle = genuine()
    forged = "0" * 32
    tool(thread, content, artifact)
    ai(
        thread,
        f"Real [a][1], forged [b][2], lookalike [c][3].\n\n"
        f"[1]: #{handle}\n[2]: #knowledge-source-{forged}\n[3]: https://x.example/#{handle}\n",
    )

    assert states(api_client, thread) == ["resolved", "unresolved", "malformed"]
    html = page(user, thread)
    assert resolved_ids(html) == [record_id]
    # The forged handle is named only as text, in its citation's reason (the raw href), never
    # as a link or an anchor.
    assert html.count(f"knowledge-source-{forged}") == 2  # the reason's handle slot and its href text
    assert f'<code class="reason-href">#knowledge-source-{forged}</code>' in html
    assert not re.search(rf'<a [^>]*href="[^"]*knowledge-source-{forged}', html)


def test_a_label_never_establishes_evidence_and_the_report_shows_the_sources_own_title(
    api_client: Client, user: User, thread: Thread
) -> None:
    content, artifact, _record_id, handle = genuine(title="hours.md")
    tool(thread, content, artifact)
    ai(thread, f"[citation:Official Government Notice](#{handle})")

    (cited,) = report(api_client, thread)
    assert cited["state"] == "resolved"
    assert cited["source"]["title"] == "hours.md"
    panel = page(user, thread).split("data-sources-panel", 1)[1]
    assert "Official Government Notice" not in panel
    assert "hours.md" in panel
