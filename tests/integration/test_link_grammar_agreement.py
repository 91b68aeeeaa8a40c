"""One link grammar: the viewer, the citation report and the export agree on every citation.

Property tests over generated Markdown (code spans, fences, images, nested
brackets, reference links, stray backticks across paragraphs, both anchor forms,
look-alikes, and the GitHub extensions: table cells, pipes, ``~~``, bare URLs). For each answer: the viewer's ``data-citation`` states, the
report's states and the export's numbered references must agree exactly, and
all three must be what the grammar finds (docs/decisions/0015-one-link-grammar.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest
from django.contrib.auth.models import User
from django.test import Client
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from knowledgeweb.knowledge import Evidence, RetrievalHit, RetrievalResult, find_citations, format_result_view
from knowledgeweb.knowledge.linkgrammar import MAX_TABLE_CELLS
from knowledgeweb.threads.evidence import resolve_citation
from knowledgeweb.threads.interchange.export import thread_export
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.rendering.export import message_export_parts
from knowledgeweb.threads.rendering.message import citation_json
from knowledgeweb.threads.rendering.pipeline import render_assistant_content
from knowledgeweb.threads.selectors import thread_citations
from knowledgeweb.threads.services import message_append, thread_create
from tests.searches import hit_handles, record_search

SHARED = "5" * 32
NATIVE = "6" * 32
SHARED_HANDLE = f"knowledge-source-{SHARED}"
NATIVE_HANDLE = f"knowledge-{NATIVE}-1"
EVIDENCE = {
    SHARED_HANDLE: Evidence(
        handle=SHARED_HANDLE, form="shared", id=SHARED, provider="local", title="Shared", excerpt="S."
    ),
    NATIVE_HANDLE: Evidence(
        handle=NATIVE_HANDLE, form="native", id=f"{NATIVE}-1", provider="ragflow", title="N", excerpt="N."
    ),
}

HREFS = [
    f"#{SHARED_HANDLE}",
    f"#user-content-{SHARED_HANDLE}",
    f"#{NATIVE_HANDLE}",
    f"#user-content-{NATIVE_HANDLE}",
    f"#knowledge-source-{'0' * 32}",  # well-formed, no evidence
    f"#knowledge-source-{SHARED.upper()}",  # look-alikes: malformed
    "#knowledge-source-abc",
    f"#knowledge%2Dsource-{SHARED}",
    f"https://example.org/#{SHARED_HANDLE}",
    "#knowledge-graphs",  # an ordinary heading link
    "https://example.org/page",
    "#ref-1",
]
LABELS = st.sampled_from(["x", "cite", "a [b] c", "*em*", "`code`", "![alt](i.png)", "1", "a\nb", "[", "]"])


@st.composite
def pieces(draw: st.DrawFn) -> str:
    href = draw(st.sampled_from(HREFS))
    label = draw(LABELS)
    return draw(
        st.sampled_from(
            [
                f"[{label}]({href})",
                f'[{label}]({href} "t")',
                f"[{label}][r{len(href) % 3}]",
                f"[r{len(href) % 3}]",
                f"`[{label}]({href})`",
                f"``[{label}]({href})``",
                "`",
                "``",
                f"![{label}]({href})",
                f"![[{label}]({href})](img.png)",
                f"[[{label}]({href})]",
                f"[outer [{label}]({href}) text](#knowledge-graphs)",
                f"<{href}>",
                f"\\[{label}]({href})",
                f"\n\n```\n[{label}]({href})\n",
                "\n\n```\n",
                f"\n\n    [{label}]({href})\n\n",
                "\n\n",
                "\n",
                "\n\n> ",
                "\n\n- ",
                "\n\n1. ",
                "<b>",
                " text ",
                "*",
                "_",
                f"\n\n[r{len(href) % 3}]: {href}\n\n",
                # GitHub-flavoured Markdown: a table around a link, stray pipes, strikethrough,
                # bare URLs (one carrying the href as its fragment or path) and e-mail addresses.
                f"\n\n| [{label}]({href}) | x |\n|---|:-:|\n| ",
                f"\n\n| a | b |\n| --- | --- |\n| {label} | [{label}]({href}) |\n\n",
                " | ",
                "|",
                "~~",
                f" https://example.org/{href} ",
                f"https://example.org/{href}",
                " mailto:a@example.org a@example.org ",
            ]
        )
    )


markdown_texts = st.lists(pieces(), min_size=1, max_size=14).map("".join)


def _viewer_states(html: str) -> list[str]:
    return re.findall(r'data-citation="(resolved|unresolved|malformed)"', html)


def _export_markers(parts: Sequence[object]) -> list[str]:
    return [str(part["handle"]) for part in parts if isinstance(part, dict)]


def _agree(markdown: str) -> None:
    rendered = render_assistant_content(markdown, EVIDENCE)
    report = [citation_json(h) for h in rendered.hooks]
    grammar = [resolve_citation(c, EVIDENCE).state for c in find_citations(markdown)]
    viewer = _viewer_states(rendered.html)
    assert viewer == [c["state"] for c in report] == grammar, markdown
    resolved_ids = re.findall(r'data-citation="resolved" data-source-id="([^"]+)"', rendered.html)
    resolved = [c["handle"] for c in report if c["state"] == "resolved"]
    assert resolved_ids == [EVIDENCE[h].id for h in resolved], markdown
    parts = message_export_parts(rendered.parsed, rendered.verdicts)
    assert _export_markers(parts) == resolved, markdown


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markdown_texts)
# Found by this test: an autolink inside a reference link's label. The grammar and report
# counted two citations while the page showed the text as written; no link holds another now.
@example(f"[[][r2]<https://example.org/#{SHARED_HANDLE}>\\[x](#{SHARED_HANDLE})")
def test_viewer_report_and_export_agree_on_generated_markdown(markdown: str) -> None:
    _agree(markdown)


@pytest.mark.parametrize(
    "markdown",
    [
        # The regression: stray backticks in two different paragraphs are not a code span,
        # so the link between them is a citation for all three (the hand-written scanner
        # of the export once treated it as code and gave it no number).
        f"A stray ` here.\n\nThen [cited](#{SHARED_HANDLE}) here.\n\nAnd another ` there.",
        f"`one\n\n[cited](#{SHARED_HANDLE})\n\ntwo`",
        f"[a [b] c](#{SHARED_HANDLE}) and ![[img]](#{SHARED_HANDLE}) and [r]\n\n[r]: #{NATIVE_HANDLE}",
        f"```\n[in fence](#{SHARED_HANDLE})\n",
        f"<https://example.org/#{SHARED_HANDLE}> and [x](#knowledge-source-{SHARED.upper()})",
        # Found by the property test: adjacent code spans mdformat cannot write back
        # faithfully; the export falls back to the text as written plus its numbered citations.
        f"`[x](#{SHARED_HANDLE})```[x](#{SHARED_HANDLE})``[x](#{SHARED_HANDLE})`[`code`](#{SHARED_HANDLE})`",
    ],
)
def test_known_hard_cases_agree(markdown: str) -> None:
    _agree(markdown)


def test_stray_backticks_in_two_paragraphs_regression_through_the_whole_app(user: User, db: None) -> None:
    thread = thread_create(owner=user, title="Backticks")
    _, formatted = record_search(thread, RetrievalHit(text="Fact.", title="doc.md"))
    (handle,) = hit_handles(formatted)
    message_append(
        thread=thread,
        type="ai",
        content=f"A stray ` here.\n\nSo [it is](#{handle}) and [again](#{handle}).\n\nAnd another ` there.",
    )
    _agree_in_app(thread, user)
    (entry,) = thread_citations(thread=thread)
    assert [c.state for c in entry.citations] == ["resolved", "resolved"]
    text = thread_export(thread=thread, format="markdown").content
    assert "it is [\\[1\\]](#ref-" in text
    assert "again [\\[1\\]](#ref-" in text


@pytest.mark.parametrize("over_the_cap", [False, True])
def test_a_table_and_tables_over_the_cell_cap_agree_through_the_whole_app(
    over_the_cap: bool, user: User, db: None
) -> None:
    thread = thread_create(owner=user, title="Tables")
    _, formatted = record_search(thread, RetrievalHit(text="Fact.", title="doc.md"))
    (handle,) = hit_handles(formatted)
    rows = MAX_TABLE_CELLS // 2 + 1 if over_the_cap else 3
    table = "| a | b |\n|:-:|---|\n" + f"| [it is](#{handle}) | x |\n" + "| y | ~~z~~ |\n" * (rows - 2)
    message_append(
        thread=thread, type="ai", content=f"{table}\nAnd [again](#{handle}) at https://example.org."
    )
    _agree_in_app(thread, user)
    (entry,) = thread_citations(thread=thread)
    assert [c.state for c in entry.citations] == ["resolved", "resolved"]
    client = Client()
    client.force_login(user)
    html = client.get(f"/threads/{thread.id}/").content.decode()
    assert ("<table>" in html) is not over_the_cap
    assert 'class="align-center"' in html or over_the_cap
    text = thread_export(thread=thread, format="markdown").content
    assert "it is [\\[1\\]](#ref-" in text
    assert "again [\\[1\\]](#ref-" in text
    # The export holds a table exactly when the page does, for any GFM reader (no cell cap there).
    reader = MarkdownIt("commonmark").enable("table")
    assert any(t.type == "table_open" for t in reader.parse(text)) is not over_the_cap


def _agree_in_app(thread: Thread, user: User) -> None:
    """The page, the API report and the export, as stored at write, agree on every answer."""
    client = Client()
    client.force_login(user)
    html = client.get(f"/threads/{thread.id}/").content.decode()
    report = [c.state for entry in thread_citations(thread=thread) for c in entry.citations]
    assert _viewer_states(html) == report
    text = thread_export(thread=thread, format="markdown").content
    markers = re.findall(r" \[\\\[(\d+)\\\]\]\(#ref-[0-9a-f]{12}-\d+\)", text)
    assert len(markers) == report.count("resolved")


@pytest.mark.django_db
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(answers=st.lists(markdown_texts, min_size=1, max_size=3))
def test_the_stored_report_page_and_export_agree_through_the_services(answers: list[str]) -> None:
    owner, _ = User.objects.get_or_create(username="grammar-owner")
    thread = thread_create(owner=owner, title="Generated")
    formatted = format_result_view(
        RetrievalResult(provider="local", query="q", hits=(RetrievalHit(text="Fact.", title="doc.md"),))
    )
    message_append(
        thread=thread,
        type="tool",
        name="knowledge_search",
        content=formatted.content,
        artifact=formatted.artifact,
        trusted=True,
        tool_view=formatted.view,
    )
    real = formatted.view["hits"][0]["handle"]
    for answer in answers:
        message_append(thread=thread, type="ai", content=answer.replace(SHARED_HANDLE, real))
    _agree_in_app(thread, owner)
