"""find_citations and classify_href recognise exactly the hrefs of docs/contract.md#reading-evidence."""

from __future__ import annotations

import pytest

from knowledgeweb.knowledge import classify_href, find_citations

HEX = "0123456789abcdef" * 2
SHARED = f"knowledge-source-{HEX}"
NATIVE = f"knowledge-{HEX}-7"


@pytest.mark.parametrize(
    ("href", "handle"),
    [
        (f"#{SHARED}", SHARED),
        (f"#user-content-{SHARED}", SHARED),
        (f"#{NATIVE}", NATIVE),
        (f"#user-content-{NATIVE}", NATIVE),
        (f"#knowledge-{HEX}-1", f"knowledge-{HEX}-1"),
        (f"#knowledge-{HEX}-999", f"knowledge-{HEX}-999"),
    ],
)
def test_classify_href_accepts_both_anchor_forms_and_normalises_user_content(href: str, handle: str) -> None:
    assert classify_href(href) == ("candidate", handle)


@pytest.mark.parametrize(
    "href",
    [
        f"#knowledge-source-{HEX.upper()}",
        f"#knowledge-source-{HEX[:31]}",
        f"#knowledge-source-{HEX}0",
        f"#user-content-knowledge-source-{HEX[:31]}",
        f"#knowledge-{HEX.upper()}-1",
        f"#knowledge-{HEX}-0",
        f"#knowledge-{HEX}-01",
        f"#knowledge-{HEX}-1000",
        f"#knowledge-{HEX[:31]}-1",
        f"https://evil.example/page#knowledge-source-{HEX}",
        f"https://evil.example/#user-content-{NATIVE}",
        f"/threads/1#knowledge-source-{HEX}",
    ],
)
def test_classify_href_marks_near_misses_and_absolute_urls_as_malformed(href: str) -> None:
    assert classify_href(href) == ("malformed", None)


@pytest.mark.parametrize("href", ["https://example.org/", "#introduction", "mailto:a@example.org", ""])
def test_classify_href_leaves_ordinary_links_alone(href: str) -> None:
    assert classify_href(href) == ("other", None)


def test_find_citations_returns_every_citation_in_order_with_label_href_state_and_handle() -> None:
    markdown = (
        f"Brewing needs care [citation:Guide](#{SHARED}) and patience "
        f"[citation:2](#user-content-{NATIVE}), see [the site](https://example.org/)."
    )
    found = find_citations(markdown)
    assert [(c.href, c.state, c.handle) for c in found] == [
        (f"#{SHARED}", "candidate", SHARED),
        (f"#user-content-{NATIVE}", "candidate", NATIVE),
    ]
    assert [c.label for c in found] == ["citation:Guide", "citation:2"]


def test_find_citations_reports_malformed_citations_without_a_handle() -> None:
    markdown = (
        f"[citation:A](#knowledge-source-{HEX.upper()}) "
        f"[citation:B](#knowledge-source-{HEX[:30]}) "
        f"[citation:C](https://evil.example/#knowledge-source-{HEX})"
    )
    assert [(c.state, c.handle) for c in find_citations(markdown)] == [("malformed", None)] * 3


def test_find_citations_ignores_citations_in_code_spans() -> None:
    assert find_citations(f"Write `[citation:Guide](#{SHARED})` to cite.") == []
    assert find_citations(f"Write ``[citation:Guide](#{SHARED})`` to cite.") == []


def test_find_citations_ignores_citations_in_fenced_code_blocks() -> None:
    assert find_citations(f"```\n[citation:Guide](#{SHARED})\n```\n") == []
    assert find_citations(f"~~~markdown\n[citation:Guide](#{SHARED})\n~~~\n") == []


def test_find_citations_ignores_citations_in_indented_code_blocks() -> None:
    assert find_citations(f"Example:\n\n    [citation:Guide](#{SHARED})\n") == []


def test_find_citations_ignores_images_that_point_at_a_handle() -> None:
    assert find_citations(f"![citation:Guide](#{SHARED})") == []


def test_find_citations_still_finds_the_citation_next_to_ignored_code() -> None:
    markdown = f"`[citation:X](#{SHARED})` and [citation:Y](#{NATIVE})\n\n```\n[citation:Z](#{SHARED})\n```\n"
    assert [c.handle for c in find_citations(markdown)] == [NATIVE]


def test_find_citations_finds_citations_inside_lists_and_emphasis() -> None:
    markdown = f"- item **[citation:Guide](#{SHARED})**\n- other _[citation:2](#{NATIVE})_\n"
    assert [c.handle for c in find_citations(markdown)] == [SHARED, NATIVE]


def test_find_citations_returns_nothing_for_ordinary_links_and_empty_text() -> None:
    assert find_citations("[home](https://example.org/) and [top](#top)") == []
    assert find_citations("") == []


def test_an_ordinary_heading_link_that_starts_with_knowledge_is_not_a_citation() -> None:
    assert classify_href("#knowledge-graphs") == ("other", None)
    assert find_citations("See [the graphs section](#knowledge-graphs).") == []


def test_a_knowledge_shaped_fragment_in_any_case_is_malformed() -> None:
    assert classify_href("#Knowledge-Source-" + "A" * 32) == ("malformed", None)
    assert classify_href("#USER-CONTENT-knowledge-" + "ABCDEF" * 6 + "-1") == ("malformed", None)


@pytest.mark.parametrize(
    "href",
    [
        "#knowledge%2Dsource-" + "a" * 32,
        "#%6Bnowledge-source-" + "a" * 32,
        "#\uff4bnowledge-source-" + "a" * 32,
        "#user-content-user-content-knowledge-source-" + "a" * 32,
        "#knowledge-" + "a" * 32 + "%2D1",
    ],
)
def test_an_encoded_or_doubled_look_alike_is_malformed_not_an_ordinary_link(href: str) -> None:
    # A browser decodes the fragment and would land on the genuine panel entry.
    assert classify_href(href) == ("malformed", None)
    assert [c.state for c in find_citations(f"See [it]({href}).")] == ["malformed"]


def test_a_message_nested_past_the_parsers_limit_has_no_citations() -> None:
    # The parser would drop what lies deeper; the viewer shows such text as written instead.
    link = "Claim [x](#knowledge-source-" + "a" * 32 + ")."
    # 18 deep still parses whole, but sits at the limit's margin: treated like deeper text.
    for depth in (18, 25):
        assert find_citations("> " * depth + link) == []
    assert [c.state for c in find_citations("> " * 16 + link)] == ["candidate"]


@pytest.mark.parametrize(
    "markdown",
    [
        f"[see <https://example.org/#{SHARED}> here](#{NATIVE})",
        f"[[][r2]<https://example.org/#{SHARED}>\\[x](#{NATIVE})",
        f"[see <a@example.org>](#{NATIVE})",
        f"[ref <https://example.org/#{SHARED}>][r]\n\n[r]: #{NATIVE}",
    ],
)
def test_no_link_holds_another_an_autolink_in_a_links_text_is_text(markdown: str) -> None:
    # CommonMark: links may not contain other links. The outer link stands, as it does
    # around a bare URL; the autolink is part of its label.
    (citation,) = find_citations(markdown)
    assert citation.handle == NATIVE
    assert "<" in citation.label


def test_an_autolink_outside_any_link_is_still_a_link() -> None:
    markdown = f"<https://example.org/#{SHARED}> and [x](#{NATIVE}) and <#{SHARED}>"
    assert [c.state for c in find_citations(markdown)] == ["malformed", "candidate"]
