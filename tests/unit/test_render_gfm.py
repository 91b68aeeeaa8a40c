"""GitHub-flavoured Markdown in answers: tables, strikethrough and bare URLs, inside the one link grammar.

Evidence is built by the real core (``format_result`` then ``read_sources``), as in
``test_render_pipeline``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest

from knowledgeweb.knowledge import (
    Evidence,
    RetrievalHit,
    RetrievalResult,
    find_citations,
    format_result,
    parse_markdown,
    read_sources,
)
from knowledgeweb.knowledge.linkgrammar import MAX_TABLE_CELLS, parse_counter, unlink_citations
from knowledgeweb.threads.rendering.export import ExportPart, message_export_parts
from knowledgeweb.threads.rendering.markdown import TABLES_AS_TEXT_NOTICE, markdown_to_html
from knowledgeweb.threads.rendering.pipeline import render_assistant_content
from knowledgeweb.threads.rendering.sanitizer import sanitize_html

OTHER = "knowledge-source-" + "0" * 32


def _evidence() -> dict[str, Evidence]:
    content, artifact = format_result(
        RetrievalResult(provider="local", query="q", hits=(RetrievalHit(text="Cats purr.", title="cats.md"),))
    )
    return read_sources("knowledge_search", content, artifact)


def _handle(evidence: dict[str, Evidence]) -> str:
    (source,) = evidence.values()
    return source.handle


def _table(rows: int, columns: int, cell: str = "a") -> str:
    line = "|" + f" {cell} |" * columns + "\n"
    return line + "|" + " --- |" * columns + "\n" + line * (rows - 1)


def _export_text(parts: Sequence[ExportPart]) -> str:
    """The export as the read assembles it, with a stand-in marker for each resolved citation."""
    return "".join(part if isinstance(part, str) else " [\\[1\\]](#ref-000000000000-1)" for part in parts)


# --- the grammar ---------------------------------------------------------------------------------


def test_the_grammar_finds_a_citation_in_a_table_cell() -> None:
    text = f"| Claim | Source |\n|---|---|\n| Cats purr | [cats](#{OTHER}) |\n"
    (citation,) = find_citations(text)
    assert (citation.label, citation.handle, citation.state) == ("cats", OTHER, "candidate")
    tokens = parse_markdown(text).tokens
    assert [t.type for t in tokens if t.type in {"table_open", "td_open"}] == [
        "table_open",
        "td_open",
        "td_open",
    ]


def test_a_linkified_url_is_a_link_without_source_text_like_an_autolink() -> None:
    (bare, auto) = parse_markdown("See https://example.org/a_b. And <https://example.org/c>.").links
    assert (bare.href, bare.label, bare.state, bare.source, bare.label_source) == (
        "https://example.org/a_b",
        "https://example.org/a_b",
        "other",
        "",
        "",
    )
    assert (auto.source, auto.label_source) == ("", "")


def test_a_linkified_url_carrying_a_citation_fragment_is_classified_like_any_link() -> None:
    (link,) = parse_markdown(f"Read https://example.org/#{OTHER} now").links
    assert link.href == f"https://example.org/#{OTHER}"
    # Exactly as the same URL written as an autolink or an inline link: a malformed citation.
    (auto,) = parse_markdown(f"Read <https://example.org/#{OTHER}> now").links
    (inline,) = parse_markdown(f"Read [x](https://example.org/#{OTHER}) now").links
    assert link.state == auto.state == inline.state == "malformed"
    assert [c.state for c in find_citations(f"Read https://example.org/#{OTHER} now")] == ["malformed"]


@pytest.mark.parametrize(
    "text",
    [
        "setup.py and README.md and example.com",  # bare hosts: never links
        "www.example.com",
        "ftp://example.org/file",
        "//example.org/path",
        "javascript:alert(1)",
        "javascript://example.org/%0Aalert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
    ],
)
def test_only_urls_with_a_web_or_mail_scheme_are_linkified(text: str) -> None:
    assert parse_markdown(text).links == ()
    assert "<a" not in markdown_to_html(text)


def test_an_email_address_and_a_mailto_url_are_linkified() -> None:
    links = parse_markdown("Write to a@example.org or mailto:b@example.org").links
    assert [link.href for link in links] == ["mailto:a@example.org", "mailto:b@example.org"]


def test_a_colon_slash_slash_after_a_long_run_of_text_links_exactly_as_it_would_alone() -> None:
    # The wrapper around markdown-it's linkify rule shows it only the end of the pending text.
    for prefix in ("x" * 100 + " ", "y" * 100 + ".", "word " * 30):
        (link,) = parse_markdown(prefix + "https://example.org/p").links
        assert link.href == "https://example.org/p"
        html = markdown_to_html(prefix + "https://example.org/p")
        assert html == f'<p>{prefix}<a href="https://example.org/p">https://example.org/p</a></p>\n'
    # A scheme glued to a long run of scheme characters is no scheme the linkifier knows.
    assert parse_markdown("a" * 100 + "https://example.org/p").links == ()
    assert parse_markdown("a" * 5 + "https://example.org/p").links == ()
    # Inside a link's label (scanned in silent mode) nothing is lost or linked twice.
    (link,) = parse_markdown("z" * 80 + " [see https://example.org/q](#x)").links
    assert (link.href, link.label) == ("#x", "see https://example.org/q")


def test_unlinking_leaves_bare_urls_and_keeps_working_in_table_cells() -> None:
    text = f"| a |\n|---|\n| [gone](#{OTHER}) |\n\nhttps://example.org/#{OTHER}\n"
    unlinked = unlink_citations(text, keep=lambda handle: False)
    # The candidate in the cell becomes its label; the bare URL (a malformed citation,
    # with no source text) stays byte for byte.
    assert unlinked == f"| a |\n|---|\n| gone |\n\nhttps://example.org/#{OTHER}\n"


# --- the page ------------------------------------------------------------------------------------


def test_a_table_renders_with_the_resolved_citation_hook_inside_its_cell() -> None:
    evidence = _evidence()
    handle = _handle(evidence)
    (source,) = evidence.values()
    rendered = render_assistant_content(
        f"| Claim | Source |\n|---|---|\n| Cats purr | [cats](#{handle}) |", evidence
    )
    assert [v.state for v in rendered.verdicts] == ["resolved"]
    hook = (
        f'<a class="citation" data-citation="resolved" data-source-id="{source.id}" href="#{handle}" '
        # The cell's claim is its row ("Cats purr"), which the excerpt's one sentence backs.
        'id="cite-1" data-passage="0"><span class="citation-number"></span>'
        '<span class="visually-hidden"> cats.md</span></a>'
    )
    assert rendered.html == (
        "<table>\n<thead>\n<tr>\n<th>Claim</th>\n<th>Source</th>\n</tr>\n</thead>\n"
        f"<tbody>\n<tr>\n<td>Cats purr</td>\n<td>{hook}</td>\n</tr>\n</tbody>\n</table>\n"
    )


def test_strikethrough_renders_as_s() -> None:
    assert (
        render_assistant_content("It was ~~wrong~~ right.", {}).html == "<p>It was <s>wrong</s> right.</p>\n"
    )


def test_a_bare_https_url_becomes_an_external_link() -> None:
    html = render_assistant_content("Docs: https://example.org/guide?a=1&b=2.", {}).html
    assert html == (
        '<p>Docs: <a href="https://example.org/guide?a=1&amp;b=2" rel="noopener noreferrer">'
        "https://example.org/guide?a=1&amp;b=2</a>.</p>\n"
    )


def test_a_bare_url_with_a_citation_fragment_is_a_malformed_citation_on_the_page() -> None:
    evidence = _evidence()
    handle = _handle(evidence)
    rendered = render_assistant_content(f"See https://example.org/#{handle} here.", evidence)
    assert [v.state for v in rendered.verdicts] == ["malformed"]
    assert re.findall(r'data-citation="(\w+)"', rendered.html) == ["malformed"]
    assert 'href="https://example.org' not in rendered.html


def test_cell_alignment_is_a_class_and_never_a_style_attribute() -> None:
    html = render_assistant_content("| l | c | r | n |\n|:--|:-:|--:|---|\n| 1 | 2 | 3 | 4 |", {}).html
    assert "style" not in html
    assert re.findall(r"<t[hd](?: [^>]*)?>", html) == [
        '<th class="align-left">',
        '<th class="align-center">',
        '<th class="align-right">',
        "<th>",
        '<td class="align-left">',
        '<td class="align-center">',
        '<td class="align-right">',
        "<td>",
    ]


def test_the_export_still_reads_the_alignment_the_page_shows_as_a_class() -> None:
    rendered = render_assistant_content("| l | c | r |\n|:--|:-:|--:|\n| 1 | 2 | 3 |", {})
    (text,) = message_export_parts(rendered.parsed, rendered.verdicts)
    assert text == "| l   |  c  |   r |\n| :-- | :-: | --: |\n| 1   |  2  |   3 |"


@pytest.mark.parametrize(
    "cell",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        '<span style="background:url(javascript:alert(1))">x</span>',
        '<td style="color:red" class="align-left">x</td>',
        "[x](javascript:alert(1))",
    ],
)
def test_hostile_content_in_a_cell_is_escaped(cell: str) -> None:
    html = render_assistant_content(f"| h |\n|---|\n| {cell} |", {}).html
    assert "<table>" in html
    # The only elements are the table's own; whatever the cell held is text, attributes and all.
    assert re.findall(r"<(\w+)", html) == ["table", "thead", "tr", "th", "tbody", "tr", "td"]
    assert not re.search(r"<[^>]*\s(style|onerror|src|class|href)=", html)


def test_the_sanitizer_keeps_table_elements_and_only_the_alignment_classes() -> None:
    raw = (
        '<table style="x"><thead><tr><th class="align-center">a</th><th class="evil">b</th></tr></thead>'
        '<tbody><tr><td class="align-right" style="color:red">1</td><td class="align-left x">2</td></tr>'
        "</tbody></table><p><s>gone</s><del>del</del></p>"
    )
    assert sanitize_html(raw) == (
        '<table><thead><tr><th class="align-center">a</th><th>b</th></tr></thead>'
        '<tbody><tr><td class="align-right">1</td><td>2</td></tr></tbody></table><p><s>gone</s>del</p>'
    )


# --- the cell cap --------------------------------------------------------------------------------


def test_a_table_at_the_cell_cap_is_a_table() -> None:
    text = _table(MAX_TABLE_CELLS // 10, 10)
    parsed = parse_markdown(text)
    assert not parsed.tables_as_text
    assert not parsed.as_written
    assert "<table>" in markdown_to_html(text)


def test_tables_over_the_cell_cap_are_shown_as_text_by_the_page_the_report_and_the_export() -> None:
    evidence = _evidence()
    handle = _handle(evidence)
    # Two tables, each under the cap, over it together; a citation in each.
    cells = MAX_TABLE_CELLS // 2 + 10
    half = _table(cells // 10, 10, cell=f"[c](#{handle})").replace(f"[c](#{handle})", "a", cells - 5)
    text = f"{half}\nBetween [here](#{handle}).\n\n{half}"
    before = parse_counter.count
    rendered = render_assistant_content(text, evidence)
    assert parse_counter.count == before + 2  # the second parse, with tables off
    parsed = rendered.parsed
    assert parsed.tables_as_text
    assert not parsed.as_written
    assert [t.type for t in parsed.tokens if t.type.startswith("table")] == []
    # The page: no table, the notice, and a hook for every citation the report holds.
    assert "<table" not in rendered.html
    assert rendered.html.startswith(f"<p><em>{TABLES_AS_TEXT_NOTICE}</em></p>\n<p>| ")
    report = [v.state for v in rendered.verdicts]
    assert len(report) == 2 * 5 + 1
    assert report == ["resolved"] * len(report)
    assert re.findall(r'data-citation="(\w+)"', rendered.html) == report
    # The export: every citation numbered, and the text does not turn back into a table.
    parts = message_export_parts(parsed, rendered.verdicts)
    assert [part for part in parts if isinstance(part, dict)] == [{"handle": handle}] * len(report)
    exported = parse_markdown(_export_text(parts), capped=False)
    assert not any(t.type == "table_open" for t in exported.tokens)
    assert len([link for link in exported.links if link.href.startswith("#ref-")]) == len(report)


def test_the_export_keeps_a_table_with_its_resolved_citation_numbered_inside_it() -> None:
    evidence = _evidence()
    handle = _handle(evidence)
    rendered = render_assistant_content(
        f"| Claim | Source |\n|:--|---|\n| Cats ~~bark~~ purr | [cats](#{handle}) and https://example.org |",
        evidence,
    )
    parts = message_export_parts(rendered.parsed, rendered.verdicts)
    assert [part for part in parts if isinstance(part, dict)] == [{"handle": handle}]
    text = _export_text(parts)
    assert text.splitlines()[1].startswith("| :--")
    # Read back as a reader would: one table, the marker inside its cell, the URL still a link.
    reread = parse_markdown(text, capped=False)
    assert [t.type for t in reread.tokens].count("table_open") == 1
    assert [link.href for link in reread.links] == ["#ref-000000000000-1", "https://example.org"]
    assert "~~bark~~" in text


def test_the_export_keeps_literal_tildes_and_pipes_literal() -> None:
    rendered = render_assistant_content("Not \\~~struck\\~~.\n\n| a |\n|---|\n| x \\| y |", {})
    (text,) = message_export_parts(rendered.parsed, rendered.verdicts)
    assert isinstance(text, str)
    assert text == "Not \\~~struck\\~~.\n\n| a      |\n| ------ |\n| x \\| y |"
    assert markdown_to_html(text) == markdown_to_html("Not \\~~struck\\~~.\n\n| a |\n|---|\n| x \\| y |")
