"""Exports: JSON keeps messages as stored; Markdown turns resolved citations into numbered references."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client
from markdown_it import MarkdownIt

from knowledgeweb.knowledge import RagflowLocator, RetrievalHit, RetrievalResult, parse_markdown
from knowledgeweb.knowledge.linkgrammar import parse_counter
from knowledgeweb.threads.errors import ExportFormatError
from knowledgeweb.threads.evidence import message_sources, validation_counter
from knowledgeweb.threads.interchange.export import thread_export
from knowledgeweb.threads.interchange.imports import thread_import
from knowledgeweb.threads.interchange.markdown import REFERENCES_HEADING
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.rendering.export import targets_reference_anchor
from knowledgeweb.threads.rendering.pipeline import render_counter
from knowledgeweb.threads.selectors import thread_citations, thread_messages
from knowledgeweb.threads.services import message_append

pytestmark = pytest.mark.django_db

Append = Callable[..., Message]
RENDERER = MarkdownIt("commonmark", {"html": True})
GENUINE_RULE = f"\n\n---\n\n## {REFERENCES_HEADING}\n\n"


@dataclass(frozen=True)
class RenderedLink:
    href: str
    text: str


def rendered_links(text: str) -> list[RenderedLink]:
    """Every link a renderer shows, as the one link grammar finds them."""
    return [RenderedLink(link.href, link.label) for link in parse_markdown(text).links]


def anchor_tag(text: str) -> str:
    """The tag of the export's reference anchors, read from its first entry."""
    match = re.search(r'<a id="ref-([0-9a-f]{12})-1"></a>', text)
    assert match is not None
    return match.group(1)


def marker(tag: str, number: int) -> str:
    return f"[\\[{number}\\]](#ref-{tag}-{number})"


def section(text: str, heading: str) -> str:
    """A message's body: after its heading, up to the next message or the genuine references."""
    body = text.split(f"{heading}\n\n", 1)[1]
    return re.split(r"\n\n## \d+\. ", body.rsplit(GENUINE_RULE, 1)[0], maxsplit=1)[0]


def reference_links(text: str) -> list[RenderedLink]:
    """The links a renderer shows that lead to a ``#ref-`` anchor."""
    return [link for link in rendered_links(text) if targets_reference_anchor(link.href)]


def html_tags(text: str) -> list[str]:
    tokens = RENDERER.parse(text)
    inline = [c.content for t in tokens if t.children for c in t.children if c.type == "html_inline"]
    return [t.content for t in tokens if t.type == "html_block"] + inline


EXCERPT = "Line one of the *excerpt*.\n```\ncode inside\n```"
RESULT = RetrievalResult(
    provider="local",
    query="q",
    hits=(
        RetrievalHit(
            text=EXCERPT, title="Guide", dataset_name="Handbook", url="https://example.org/guide", page=3
        ),
        RetrievalHit(text="Second source text.", title="Other"),
    ),
)
NATIVE = RetrievalResult(
    provider="ragflow",
    query="q",
    hits=(
        RetrievalHit(
            text="Native text.",
            title="manual.pdf",
            dataset_name="Manuals",
            locator=RagflowLocator(dataset_id="d", document_id="e", chunk_id="f", pages=(7, 8)),
        ),
    ),
)


@pytest.fixture
def cited_thread(thread: Thread, append_retrieval: Append) -> tuple[Thread, list[str]]:
    message_append(thread=thread, type="human", content="What does the guide say?")
    tool = append_retrieval(thread, RESULT)
    native = append_retrieval(thread, NATIVE, native_nonce="c" * 32)
    guide, other = message_sources(tool)
    (manual,) = message_sources(native)
    message_append(
        thread=thread,
        type="ai",
        content=(
            f"Per [the guide](#{guide}) and [again](#user-content-{guide}), also [other](#{other}) "
            f"and [manual p.7](#{manual}). Not [missing](#knowledge-source-{'0' * 32}), "
            f"not [broken](#knowledge-source-XYZ), and `[code](#{guide})` stays code."
        ),
    )
    return thread, [guide, other, manual]


def test_the_json_export_holds_every_message_as_stored(cited_thread: tuple[Thread, list[str]]) -> None:
    thread, _ = cited_thread
    document = json.loads(thread_export(thread=thread, format="json").content)
    stored = thread_messages(thread=thread)
    assert document["id"] == str(thread.id)
    assert document["title"] == thread.title
    assert [
        (m["seq"], m["type"], m["name"], m["content"], m["artifact"], m["digest"])
        for m in document["messages"]
    ] == [(m.seq, m.type, m.name, m.content, m.artifact, m.digest) for m in stored]


def test_the_json_export_is_an_import_body(cited_thread: tuple[Thread, list[str]], other_user: User) -> None:
    thread, _ = cited_thread
    document = json.loads(thread_export(thread=thread, format="json").content)
    copy = thread_import(
        owner=other_user,
        title=document["title"],
        agent_name=document["agent_name"],
        messages=document["messages"],
        trusted=True,
    )
    assert [(m.type, m.content, m.artifact, m.digest) for m in thread_messages(thread=copy)] == [
        (m.type, m.content, m.artifact, m.digest) for m in thread_messages(thread=thread)
    ]


def test_the_markdown_export_numbers_resolved_citations_and_lists_their_evidence(
    cited_thread: tuple[Thread, list[str]],
) -> None:
    thread, (guide, _, _) = cited_thread
    export = thread_export(thread=thread, format="markdown")
    assert export.content_type.startswith("text/markdown")
    text = export.content
    tag = anchor_tag(text)
    answer = section(text, "## 4. AI")
    assert answer == (
        f"Per the guide {marker(tag, 1)} and again {marker(tag, 1)}, also other {marker(tag, 2)} "
        f"and manual p.7 {marker(tag, 3)}. Not \\[no source: missing\\], not \\[malformed: broken\\], "
        f"and `[code](#{guide})` stays code."
    )
    references = text.split(f"## {REFERENCES_HEADING}\n\n", 1)[1]
    assert references.split("\n\n", 1)[1].startswith(
        f'### <a id="ref-{tag}-1"></a>\\[1\\] Guide\n\n- Provider: local\n- Dataset: Handbook\n- Page: 3\n'
    )
    assert "- URL: <https://example.org/guide>\n" in references
    # The excerpt is fenced with a longer fence than any it holds, so it reads back exactly.
    assert f"````text\n{EXCERPT}\n````" in references
    assert f'### <a id="ref-{tag}-2"></a>\\[2\\] Other\n\n- Provider: local\n' in references
    assert (
        f'### <a id="ref-{tag}-3"></a>\\[3\\] manual.pdf\n\n- Provider: ragflow\n- Dataset: Manuals\n'
        "- Pages: 7, 8\n"
    ) in references
    assert "```text\nNative text.\n```" in references
    assert "\\[4\\]" not in references
    # Rendered, each marker is a link to its own entry, and nothing else links to an entry.
    assert reference_links(text) == [RenderedLink(f"#ref-{tag}-{n}", f"[{n}]") for n in (1, 1, 2, 3)]


def test_the_references_section_closes_the_document_after_a_rule_and_says_how_to_tell_genuine_markers(
    cited_thread: tuple[Thread, list[str]],
) -> None:
    thread, _ = cited_thread
    text = thread_export(thread=thread, format="markdown").content
    tag = anchor_tag(text)
    head, section_text = text.rsplit(f"\n---\n\n## {REFERENCES_HEADING}\n\n", 1)
    assert f"## {REFERENCES_HEADING}" not in head
    note = section_text.split("\n\n", 1)[0]
    assert note.startswith("Only a marker that links to an entry below")
    assert f"`ref-{tag}-`" in note
    tokens = RENDERER.parse(text)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings[-4:] == [
        REFERENCES_HEADING,
        f'<a id="ref-{tag}-1"></a>\\[1\\] Guide',
        f'<a id="ref-{tag}-2"></a>\\[2\\] Other',
        f'<a id="ref-{tag}-3"></a>\\[3\\] manual.pdf',
    ]
    assert [t.type for t in tokens].count("hr") == 1


def test_the_markdown_export_is_the_same_every_time(cited_thread: tuple[Thread, list[str]]) -> None:
    thread, _ = cited_thread
    assert thread_export(thread=thread, format="markdown") == thread_export(thread=thread, format="markdown")


def test_the_export_reads_what_was_stored_at_write_and_parses_nothing(
    cited_thread: tuple[Thread, list[str]],
) -> None:
    thread, _ = cited_thread
    cache.clear()
    validation_counter.reset()
    parse_counter.reset()
    render_counter.reset()
    text = thread_export(thread=thread, format="markdown").content
    assert REFERENCES_HEADING in text
    assert (validation_counter.count, parse_counter.count, render_counter.count) == (0, 0, 0)


def test_the_markdown_export_keeps_tool_output_verbatim_in_a_code_block(
    cited_thread: tuple[Thread, list[str]],
) -> None:
    thread, _ = cited_thread
    tool = thread_messages(thread=thread)[1]
    text = thread_export(thread=thread, format="markdown").content
    assert "## 2. Tool `knowledge_search`\n\n````text\n" + tool.content in text


def test_provider_text_cannot_inject_markdown_into_a_reference(
    thread: Thread, append_retrieval: Append
) -> None:
    hostile = RetrievalResult(
        provider="local",
        query="q",
        hits=(RetrievalHit(text="x", title="[click](javascript:alert(1))\n# Heading", dataset_name="<b>"),),
    )
    (handle,) = message_sources(append_retrieval(thread, hostile))
    message_append(thread=thread, type="ai", content=f"[see](#{handle})")
    text = thread_export(thread=thread, format="markdown").content
    assert r"\[1\] \[click\]\(javascript:alert\(1\)\) \# Heading" + "\n" in text
    assert r"- Dataset: \<b\>" in text


def test_an_unknown_export_format_is_refused(thread: Thread) -> None:
    with pytest.raises(ExportFormatError, match="unknown export format 'xml'"):
        thread_export(thread=thread, format="xml")


FORGING_AI = (
    "Genuine [the guide](#{guide}).\n\n"
    "Forged plain [1] and [2].\n\n"
    "Forged link [[1]](#ref-1), [[2]](#user-content-ref-2), [[3]](https://example.org/#ref-3), [[4]](#%72ef-4).\n\n"
    "Forged by reference [[5]][five] and [6].\n\n"
    '<a href="#ref-7">[7]</a> <sup id="ref-8">[8]</sup> <https://example.org/#ref-9> and a footnote[^1].\n\n'
    f"---\n\n## {REFERENCES_HEADING}\n\n### [1] Forged title\n\n```text\nforged excerpt\n```\n\n"
    "[five]: #ref-5\n[6]: #ref-6\n[^1]: https://example.org/note\n"
)


@pytest.fixture
def forged_thread(thread: Thread, append_retrieval: Append) -> Thread:
    message_append(thread=thread, type="human", content="Is [[1]](#ref-1) real? <a href='#ref-2'>[2]</a>")
    guide, _ = message_sources(append_retrieval(thread, RESULT))
    message_append(thread=thread, type="ai", content=FORGING_AI.format(guide=guide))
    return thread


def test_markers_written_in_the_thread_stay_plain_text_while_genuine_markers_are_links(
    forged_thread: Thread,
) -> None:
    text = thread_export(thread=forged_thread, format="markdown").content
    tag = anchor_tag(text)
    assert section(text, "## 1. Human") == "Is [1] real? \\<a href='#ref-2'>[2]\\</a>"
    assert section(text, "## 3. AI") == (
        f"Genuine the guide {marker(tag, 1)}.\n\n"
        "Forged plain [1] and [2].\n\n"
        "Forged link [1], [2], [3], [4].\n\n"
        "Forged by reference [5] and 6.\n\n"
        # A bare URL is a link (GFM): the autolink's label is written with its colon escaped.
        '\\<a href="#ref-7">[7]\\</a> \\<sup id="ref-8">[8]\\</sup> https\\://example.org/#ref-9 '
        # CommonMark reads "[^1]" with its definition as an ordinary link, and so does the export.
        "and a footnote[^1](https://example.org/note).\n\n"
        # The text is regenerated from the viewer's tokens: a thematic break is written as one.
        f"{'_' * 70}\n\n## {REFERENCES_HEADING}\n\n### [1] Forged title\n\n```text\nforged excerpt\n```"
    )
    # As a renderer reads the whole document: one link leads to a reference, the genuine marker;
    # the only raw HTML is the genuine entry's anchor.
    assert reference_links(text) == [RenderedLink(f"#ref-{tag}-1", "[1]")]
    assert [link.href for link in rendered_links(text)] == [
        f"#ref-{tag}-1",
        "https://example.org/note",
        "https://example.org/guide",
    ]
    assert html_tags(text) == [f'<a id="ref-{tag}-1">', "</a>"]
    # The genuine section is the last one and holds only the genuine entry.
    genuine = text.rsplit(GENUINE_RULE, 1)[1]
    assert "Forged" not in genuine
    assert genuine.count("### ") == 1


def test_forged_markers_stay_inert_through_the_api_and_the_command(
    forged_thread: Thread, api_client: Client
) -> None:
    response = api_client.get(f"/api/threads/{forged_thread.id}/export?format=markdown")
    assert response.status_code == 200
    out = StringIO()
    call_command("export_thread", str(forged_thread.id), "--format", "markdown", stdout=out)
    for text in (response.content.decode(), out.getvalue()):
        tag = anchor_tag(text)
        assert reference_links(text) == [RenderedLink(f"#ref-{tag}-1", "[1]")]
        assert "[[1]](#ref-1)" not in text


def test_reference_style_citations_resolve_like_inline_ones_and_their_definitions_are_dropped(
    thread: Thread, append_retrieval: Append
) -> None:
    guide, other = message_sources(append_retrieval(thread, RESULT))
    (manual,) = message_sources(append_retrieval(thread, NATIVE, native_nonce="c" * 32))
    ai = message_append(
        thread=thread,
        type="ai",
        content=(
            "Full [the guide][g], collapsed [Other][], shortcut [manual], again [guide again][G].\n"
            "Unresolved [missing][m] and [gone], malformed [broken][b], and a [site][s] link stays.\n\n"
            f'[g]: #{guide}\n[other]: #user-content-{other}\n[manual]: #{manual} "a title"\n'
            f"[m]: #knowledge-source-{'0' * 32}\n[gone]: #knowledge-source-{'1' * 32}\n"
            "[b]: #knowledge-source-XYZ\n[s]: https://example.org/site\n"
        ),
    )
    text = thread_export(thread=thread, format="markdown").content
    tag = anchor_tag(text)
    assert section(text, "## 3. AI") == (
        f"Full the guide {marker(tag, 1)}, collapsed Other {marker(tag, 2)}, shortcut manual {marker(tag, 3)}, "
        f"again guide again {marker(tag, 1)}.\n"
        # Other links stay links; the export writes them inline.
        "Unresolved \\[no source: missing\\] and \\[no source: gone\\], malformed \\[malformed: broken\\], "
        "and a [site](https://example.org/site) link stays."
    )
    assert "\\[3\\] manual.pdf" in text
    # The export and the citation report read the same citations the same way.
    (report,) = thread_citations(thread=thread)
    assert report.message == ai
    states = [c.state for c in report.citations]
    assert states == ["resolved"] * 4 + ["unresolved", "unresolved", "malformed"]
    assert len(reference_links(text)) == states.count("resolved")


HOSTILE_EXCERPT = (
    'Starts with ``` and ```` runs,\n# not a heading\n[1]: #ref-1\n[[2]](#ref-2) <a id="ref-3">x</a>\n'
    "~~~\n<!-- open comment\n    indented line\n\ttab and trailing spaces   \nends"
)


def test_excerpts_come_out_byte_exact_and_inert_inside_their_block(
    thread: Thread, append_retrieval: Append
) -> None:
    hostile = RetrievalResult(
        provider="local", query="q", hits=(RetrievalHit(text=HOSTILE_EXCERPT, title="T"),)
    )
    ((handle, source),) = message_sources(append_retrieval(thread, hostile)).items()
    assert HOSTILE_EXCERPT in source.excerpt
    message_append(thread=thread, type="ai", content=f"[see](#{handle})")
    text = thread_export(thread=thread, format="markdown").content
    assert f"\n`````text\n{source.excerpt}\n`````\n" in text.rsplit(GENUINE_RULE, 1)[1]
    fences = [t for t in RENDERER.parse(text) if t.type == "fence"]
    assert fences[-1].content == source.excerpt + "\n"
    tag = anchor_tag(text)
    assert reference_links(text) == [RenderedLink(f"#ref-{tag}-1", "[1]")]
    assert html_tags(text) == [f'<a id="ref-{tag}-1">', "</a>"]


def test_a_reply_cut_off_inside_a_code_block_is_closed_before_the_references(
    cited_thread: tuple[Thread, list[str]],
) -> None:
    thread, (guide, _, _) = cited_thread
    message_append(thread=thread, type="ai", content=f"Per [the guide](#{guide}):\n\n````python\nprint('cut")
    text = thread_export(thread=thread, format="markdown").content
    tag = anchor_tag(text)
    assert section(text, "## 5. AI") == f"Per the guide {marker(tag, 1)}:\n\n```python\nprint('cut\n```"
    tokens = RENDERER.parse(text)
    assert [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"][-4] == (
        REFERENCES_HEADING
    )


def test_an_unresolved_citation_before_a_forged_marker_keeps_its_marker_and_forges_no_link(
    thread: Thread, append_retrieval: Append
) -> None:
    guide, other = message_sources(append_retrieval(thread, RESULT))
    # Unwrapping the unresolved citation into its bare label would join "[1]" to "(#ref-1)" into
    # a new link; its "no source" marker ends in an escaped bracket, so nothing joins.
    content = f"Per [other](#{other}), [[1]](#knowledge-source-{'0' * 32})(#ref-1)"
    message_append(thread=thread, type="ai", content=f"Per [the guide](#{guide}).")
    message_append(thread=thread, type="ai", content=content)
    text = thread_export(thread=thread, format="markdown").content
    tag = anchor_tag(text)
    assert section(text, "## 3. AI") == f"Per other {marker(tag, 2)}, \\[no source: [1]\\](#ref-1)"
    assert reference_links(text) == [
        RenderedLink(f"#ref-{tag}-1", "[1]"),
        RenderedLink(f"#ref-{tag}-2", "[2]"),
    ]
    assert [c.state for c in thread_citations(thread=thread)[1].citations] == ["resolved", "unresolved"]
    assert text.rsplit(GENUINE_RULE, 1)[1].count("### ") == 2


def test_a_message_nested_past_the_parsers_limit_is_exported_whole_and_verbatim(
    thread: Thread, append_retrieval: Append
) -> None:
    guide, _ = message_sources(append_retrieval(thread, RESULT))
    content = "> " * 25 + f"A claim a parser would drop [the guide](#{guide})."
    message_append(thread=thread, type="ai", content=content)
    text = thread_export(thread=thread, format="markdown").content
    body = section(text, "## 2. AI")
    assert body.startswith("*Shown verbatim: this message's Markdown could not be rendered safely.*")
    assert content in body
    assert reference_links(text) == []
