"""Assistant content through markdown -> sanitize -> resolve, with evidence built by the real core."""

from __future__ import annotations

import re
from html import escape

import pytest

from knowledgeweb.knowledge import (
    Evidence,
    RagflowLocator,
    RetrievalHit,
    RetrievalResult,
    find_citations,
    format_result,
    read_sources,
)
from knowledgeweb.knowledge.citations import malformed_reason
from knowledgeweb.threads.evidence import REASON_UNRESOLVED
from knowledgeweb.threads.rendering.markdown import markdown_to_html
from knowledgeweb.threads.rendering.pipeline import render_assistant_content, render_counter


def _shared() -> dict[str, Evidence]:
    content, artifact = format_result(
        RetrievalResult(
            provider="local",
            query="q",
            hits=(RetrievalHit(text="Cats purr & <b>sleep</b>.", title="cats.md"),),
        )
    )
    return read_sources("knowledge_search", content, artifact)


def _native() -> dict[str, Evidence]:
    hit = RetrievalHit(
        text="Chunk one.",
        title="report.pdf",
        dataset_name="Reports",
        locator=RagflowLocator(dataset_id="d", document_id="doc", chunk_id="c", pages=(2,)),
    )
    content, artifact = format_result(RetrievalResult(provider="ragflow", query="q", hits=(hit,)))
    return read_sources("knowledge_search", content, artifact)


def _only(evidence: dict[str, Evidence]) -> Evidence:
    (source,) = evidence.values()
    return source


def _resolved_hook(source: Evidence, anchor: str = "cite-1", extra: str = "", flag: str = "") -> str:
    """The resolved hook: the number slot the page fills and the source's own title."""
    return (
        f'<a class="citation" data-citation="resolved" data-source-id="{source.id}" '
        f'href="#{source.handle}" id="{anchor}"{extra}><span class="citation-number"></span>'
        f'<span class="visually-hidden"> {escape(source.title)}</span>{flag}</a>'
    )


_MISMATCH_FLAG = (
    '<span class="citation-flag" aria-hidden="true">≠</span>'
    '<span class="visually-hidden"> (label names another source)</span>'
)


def _inert_hook(state: str, label: str, reason: str, href: str, anchor: str = "cite-1") -> str:
    """An unverified citation: a word, never the answer's label or number; its reason names the
    label and the raw href."""
    name, word = ("No source", "no source") if state == "unresolved" else ("Malformed citation", "malformed")
    handle = href[1:] if state == "unresolved" else ""
    because = f' data-reason-handle="{handle}"' if handle else ""
    return (
        f'<button type="button" class="citation" data-citation="{state}" id="{anchor}" '
        f'popovertarget="{anchor}-reason" aria-describedby="{anchor}-reason" data-issue="{state}">{word}</button>'
        f'<span class="citation-reason" id="{anchor}-reason" popover="auto" data-citation-reason="{state}">'
        f'<strong>{name}: </strong><span class="reason-text"{because}>{escape(reason, quote=False)}</span> '
        f'The answer labelled it “{label}”; its link is <code class="reason-href">{escape(href)}</code>.</span>'
    )


def test_it_shows_raw_html_in_markdown_as_text() -> None:
    html = markdown_to_html('<script>alert(1)</script> <img src=x onerror="alert(1)">')
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img" not in html


def test_it_renders_images_as_their_alt_text() -> None:
    html = markdown_to_html("![a <b> chart](https://tracker.example/pixel.png)")
    assert html == "<p><em>a &lt;b&gt; chart</em></p>\n"


@pytest.mark.parametrize("prefix", ["", "user-content-"])
def test_it_resolves_both_shared_forms_to_the_same_hook(prefix: str) -> None:
    evidence = _shared()
    source = _only(evidence)
    rendered = render_assistant_content(f"Purring [cats](#{prefix}{source.handle}).", evidence)
    assert rendered.html.strip() == f"<p>Purring {_resolved_hook(source)}.</p>"
    assert [v.state for v in rendered.verdicts] == ["resolved"]


@pytest.mark.parametrize("prefix", ["", "user-content-"])
def test_it_resolves_the_native_form_to_its_own_handle(prefix: str) -> None:
    evidence = _native()
    source = _only(evidence)
    assert source.handle == f"knowledge-{source.id}"
    rendered = render_assistant_content(f"See [1](#{prefix}{source.handle}).", evidence)
    assert rendered.html.strip() == f"<p>See {_resolved_hook(source)}.</p>"


def test_a_resolved_citation_never_shows_the_answers_label_which_the_dialog_keeps_when_it_misleads() -> None:
    evidence = _shared()
    source = _only(evidence)
    rendered = render_assistant_content(
        f"[*NASA* `Earth Fact Sheet`](#{source.handle}) and [citation:cats](#{source.handle})", evidence
    )
    mismatch = ' data-label="NASA Earth Fact Sheet" data-issue="label-mismatch"'
    assert rendered.html.strip() == (
        f"<p>{_resolved_hook(source, extra=mismatch, flag=_MISMATCH_FLAG)} and {_resolved_hook(source, 'cite-2')}</p>"
    )
    assert [v.label for v in rendered.verdicts] == ["NASA Earth Fact Sheet", "citation:cats"]
    assert [h.label_mismatch for h in rendered.hooks] == [True, False]


def test_the_anchor_prefix_names_each_hook_in_order() -> None:
    evidence = _shared()
    source = _only(evidence)
    text = f"[a](#{source.handle}) [b](#knowledge-source-{'0' * 32}) [c](#knowledge-source-bad)"
    rendered = render_assistant_content(text, evidence, anchor_prefix="cite-m")
    assert re.findall(r' id="(cite-m-\d)"', rendered.html) == ["cite-m-1", "cite-m-2", "cite-m-3"]
    assert [h.anchor for h in rendered.hooks] == ["cite-m-1", "cite-m-2", "cite-m-3"]


def test_it_renders_a_citation_without_evidence_as_a_button_with_its_reason() -> None:
    href = f"#knowledge-source-{'0' * 32}"
    rendered = render_assistant_content(f"[citation:forged]({href})", _shared())
    assert rendered.html.strip() == f"<p>{_inert_hook('unresolved', 'forged', REASON_UNRESOLVED, href)}</p>"
    assert " href=" not in rendered.html  # nothing to follow; the raw href is shown as text


@pytest.mark.parametrize(
    ("href", "how"),
    [
        ("#knowledge-source-" + "A" * 32, "upper-case letters"),
        ("#knowledge-source-" + "a" * 31, "has 31 hexadecimal digits"),
        ("#knowledge-source-" + "g" * 32, "characters other than the hexadecimal digits"),
        ("#knowledge-" + "a" * 32 + "-0", "chunk number"),
        ("#knowledge-" + "a" * 32 + "-1000", "chunk number"),
        ("https://evil.example/#knowledge-source-" + "a" * 32, "points at another page"),
        ("/threads/#knowledge-source-" + "a" * 32, "points at another page"),
        ("#Knowledge-source-" + "a" * 32, "upper-case letters"),
        ("ftp://files.example/#knowledge-source-" + "a" * 32, "points at another page"),
        ("tel:1#knowledge-source-" + "a" * 32, "points at another page"),
        ("#knowledge%2Dsource-" + "a" * 32, "percent-encoded"),
    ],
)
def test_it_renders_malformed_citation_hrefs_as_malformed_spans_saying_what_is_wrong(
    href: str, how: str
) -> None:
    rendered = render_assistant_content(f"[bad]({href})", _shared())
    reason = malformed_reason(href)
    assert how in reason
    assert rendered.html.strip() == f"<p>{_inert_hook('malformed', 'bad', reason, href)}</p>"


def test_it_never_turns_citations_in_code_into_hooks() -> None:
    evidence = _shared()
    source = _only(evidence)
    text = f"`[a](#{source.handle})`\n\n```\n[b](#{source.handle})\n```\n\n    [c](#{source.handle})\n"
    rendered = render_assistant_content(text, evidence)
    assert "data-citation" not in rendered.html
    assert rendered.verdicts == ()


def test_it_leaves_ordinary_links_alone() -> None:
    rendered = render_assistant_content("[docs](https://example.org/docs) and [top](#top)", {})
    assert rendered.html.strip() == (
        '<p><a href="https://example.org/docs" rel="noopener noreferrer">docs</a> and <a href="#top">top</a></p>'
    )


def test_it_shows_a_forged_panel_id_in_ai_markdown_as_text() -> None:
    evidence = _shared()
    source = _only(evidence)
    text = f'<div id="{source.handle}">fake source</div> [x](#{source.handle})'
    rendered = render_assistant_content(text, evidence)
    assert f'id="{source.handle}"' not in rendered.html
    assert f"&lt;div id=&quot;{source.handle}&quot;&gt;fake source&lt;/div&gt;" in rendered.html
    assert rendered.html.count('data-citation="resolved"') == 1


def test_it_does_not_let_the_label_establish_evidence() -> None:
    rendered = render_assistant_content(f"[cats.md](#knowledge-source-{'1' * 32})", _shared())
    assert 'data-citation="unresolved"' in rendered.html


@pytest.mark.parametrize(
    "markdown",
    [
        "[a](#knowledge-source-{id}) [b](#user-content-knowledge-source-{id}) [c](#knowledge-source-{zero})",
        "Line\n[a](#knowledge-source-{id}\n) and [d](<#knowledge-source-{id}>)",
        "[a][r]\n\n[r]: #knowledge-source-{id}",
        "> quote [a](#knowledge-source-{id})\n\n- item [b](#KNOWLEDGE-source-{id})",
        "[outer [inner](#knowledge-source-{id})](#knowledge-source-{zero})",
        "![img](#knowledge-source-{id}) [x](https://e.example/#knowledge-source-{id})",
        '<https://e.example/#knowledge-source-{id}> [t](#knowledge-source-{id} "title")',
        "[r](/x#knowledge-source-{id}) [s](//evil.example/#knowledge-source-{id}) [m](mailto:a@b.example)",
        "[f](ftp://e.example/#knowledge-source-{id}) [t](tel:1#knowledge-source-{id}) [o](x-app:a#knowledge-{id}-1)",
    ],
)
def test_it_emits_exactly_one_hook_per_citation_the_core_finds(markdown: str) -> None:
    evidence = _shared()
    text = markdown.format(id=_only(evidence).id, zero="0" * 32)
    rendered = render_assistant_content(text, evidence)
    hooks = re.findall(r'data-citation="(\w+)"', rendered.html)
    found = find_citations(text)
    assert len(hooks) == len(found)
    assert [v.state for v in rendered.verdicts] == hooks


def test_it_counts_each_markdown_render() -> None:
    render_counter.reset()
    render_assistant_content("one", {})
    render_assistant_content("two", {})
    assert render_counter.count == 2


def test_a_message_nested_too_deeply_is_shown_whole_as_text_with_a_notice() -> None:
    hidden = "the claim a parser would drop"
    text = "> " * 25 + "- " * 3 + hidden + " [x](#knowledge-source-" + "a" * 32 + ")"
    rendered = render_assistant_content(text, {})
    assert hidden in rendered.html
    assert "nested too deeply" in rendered.html
    assert "data-citation" not in rendered.html
    assert "<a " not in rendered.html
    assert rendered.verdicts == ()


def test_a_message_past_the_structure_caps_is_shown_as_written_with_no_citations() -> None:
    from knowledgeweb.knowledge.linkgrammar import MAX_BRACKETS, MAX_TOKENS, parse_markdown
    from knowledgeweb.threads.rendering.export import VERBATIM_NOTE, message_export_parts
    from knowledgeweb.threads.rendering.markdown import TOO_LARGE_NOTICE

    source = _shared()
    handle = next(iter(source))
    brackets = f"[cited](#{handle}) " + "[" * MAX_BRACKETS
    tokens = f"[cited](#{handle}) " + "`a` " * MAX_TOKENS
    for text in (brackets, tokens):
        rendered = render_assistant_content(text, source)
        assert rendered.parsed.as_written
        assert rendered.verdicts == ()
        assert find_citations(text) == []
        assert TOO_LARGE_NOTICE in rendered.html
        assert "data-citation" not in rendered.html
        (part,) = message_export_parts(rendered.parsed, rendered.verdicts)
        assert isinstance(part, str)
        assert part.startswith(VERBATIM_NOTE)
        assert text in part
    # Just inside the caps the message is formatted, its citations count, and the export's
    # markers (which add brackets and tokens of their own) do not push it past them.
    inside = f"[cited](#{handle}) " * 20 + "[" * (MAX_BRACKETS - 20)
    assert not parse_markdown(inside).as_written
    rendered = render_assistant_content(inside, source)
    assert [v.state for v in rendered.verdicts] == ["resolved"] * 20
    parts = message_export_parts(rendered.parsed, rendered.verdicts)
    assert [p for p in parts if isinstance(p, dict)] == [{"handle": handle}] * 20


def test_only_the_citation_stage_can_keep_an_id_unprefixed() -> None:
    from knowledgeweb.threads.rendering.sanitizer import sanitize_html

    # The mark the hooks carry is stripped from anything else by the allowlist, before the
    # citation stage: a message that writes it keeps no id of its own naming.
    html = sanitize_html('<a data-knowledgeweb-hook="" id="cite-1" href="#x">x</a><p id="cite-2">y</p>')
    assert "data-knowledgeweb-hook" not in html
    assert 'id="user-content-cite-1"' in html
    assert 'id="user-content-cite-2"' in html
    assert ' id="cite-' not in html


def test_a_message_cannot_write_a_citation_slot_of_its_own() -> None:
    # The markdown stage writes each citation as a slot the hooks fill once the message is
    # sanitized; a slot carries a digest of the message, which the message cannot hold.
    from knowledgeweb.threads.rendering import pipeline

    handle = "knowledge-source-" + "a" * 32
    text = f"[x](#{handle})"
    forged = "{" + pipeline._slot_mark(text) + ":0}"  # the real mark of ``text``, written into another
    rendered = render_assistant_content(f"{forged} and {text}", {})
    assert [v.state for v in rendered.verdicts] == ["unresolved"]
    assert rendered.html.count('data-citation="unresolved"') == 1
    assert forged in rendered.html  # shown as the text it is


def test_the_sanitizer_refuses_output_it_cannot_read() -> None:
    from knowledgeweb.threads.rendering.sanitizer import SanitizerOutputError, _user_content

    assert _user_content('<p id="a">x</p>') == '<p id="user-content-a">x</p>'
    with pytest.raises(SanitizerOutputError):
        _user_content("<p id=a>x</p>")  # never what bleach writes: unquoted
