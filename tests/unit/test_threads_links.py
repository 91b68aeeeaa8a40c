"""Rewriting Markdown links for the export: code stays code, images stay images, markup stays inert."""

from __future__ import annotations

from knowledgeweb.threads.links import Link, RenderedLink, inspect_markdown, rewrite_links


def shout(link: Link) -> str:
    kind = "inline" if link.reference is None else f"ref={link.reference}"
    return f"<{link.label}|{link.href}|{kind}>"


def test_it_passes_each_inline_link_to_the_replacer() -> None:
    text = 'See [one](#a) and [two *bold*](#b "a title") then [three]( <#c> ).'
    assert rewrite_links(text, shout) == (
        "See <one|#a|inline> and <two *bold*|#b|inline> then <three|#c|inline>."
    )


def test_it_passes_full_collapsed_and_shortcut_reference_links_with_their_definitions_href() -> None:
    text = "[one][First] and [Two][] and [three] end.\n\n[first]: #a\n[two]: #b 'title'\n[Three]: <#c>\n"
    assert rewrite_links(text, shout) == (
        "<one|#a|ref=FIRST> and <Two|#b|ref=TWO> and <three|#c|ref=THREE> end.\n\n"
        "[first]: #a\n[two]: #b 'title'\n[Three]: <#c>\n"
    )


def test_brackets_without_a_definition_are_text() -> None:
    text = "[one][missing] and [two][] and [three] and [four][]\n\n[four]: #d\n"
    assert rewrite_links(text, shout) == (
        "[one][missing] and [two][] and [three] and <four|#d|ref=FOUR>\n\n[four]: #d\n"
    )


def test_it_drops_the_definitions_the_caller_names_and_keeps_the_others_as_written() -> None:
    text = "Text [a] and [b].\n\n[a]: #drop-me\n[b]: https://example.org\n  'a title'\nAfter.\n"
    result = rewrite_links(text, lambda link: link.kept(), drop_definition=lambda href: href == "#drop-me")
    assert result == "Text [a] and [b].\n\n[b]: https://example.org\n  'a title'\nAfter.\n"


def test_it_leaves_code_spans_and_code_blocks_alone() -> None:
    text = "Inline `[x](#a)` and ``[y](#b) ` still code``.\n\n```\n[z](#c)\n```\n\n    [w](#d)\n\n[v](#e)\n"
    expected = "Inline `[x](#a)` and ``[y](#b) ` still code``.\n\n```\n[z](#c)\n```\n\n    [w](#d)\n\n<v|#e|inline>\n"
    assert rewrite_links(text, shout) == expected


def test_it_keeps_images_whole_inline_or_by_reference() -> None:
    text = "![alt](#a) ![alt][pic] \\[not](#b) [yes](#c)\n\n[pic]: #p\n"
    assert rewrite_links(text, shout) == "![alt](#a) ![alt][pic] \\[not](#b) <yes|#c|inline>\n\n[pic]: #p\n"


def test_it_handles_nested_brackets_in_the_label() -> None:
    assert rewrite_links("[a [b] c](#x)", shout) == "<a [b] c|#x|inline>"


def test_a_link_inside_a_label_makes_the_outer_brackets_text_as_commonmark_does() -> None:
    assert rewrite_links("[a [b](#in) c](#out)", shout) == "[a <b|#in|inline> c](#out)"


def test_it_escapes_raw_html_and_footnotes_but_keeps_autolinks() -> None:
    text = '<a href="#ref-1">[1]</a> <!-- hide --> 1 < 2 <https://example.org/x> [^1]\n\n[^1]: #note\n'
    assert rewrite_links(text, shout) == (
        '\\<a href="#ref-1">[1]\\</a> \\<!-- hide --> 1 < 2 <https://example.org/x> \\[^1]\n\n\\[^1]: #note\n'
    )


def test_it_escapes_an_autolink_the_caller_refuses() -> None:
    text = "<https://example.org/#ref-1> <https://example.org/>"
    result = rewrite_links(text, shout, autolink_allowed=lambda href: "#" not in href)
    assert result == "\\<https://example.org/#ref-1> <https://example.org/>"


def test_it_leaves_unclosed_links_as_written() -> None:
    text = "[open](#x and [plain] and [other](\n"
    assert rewrite_links(text, shout) == text


def test_it_leaves_hostile_unclosed_syntax_as_written() -> None:
    # Thousands of unclosed brackets, backtick runs and titles (scans are bounded, see links.py).
    text = "[" * 20000 + "`" * 300 + '[a]( "' * 5000
    assert rewrite_links(text, shout) == text


def test_deeply_nested_links_stay_bounded_and_are_left_as_text_below_the_limit() -> None:
    text = "[" * 5000 + "x" + "](#a)" * 5000
    result = rewrite_links(text, shout)
    assert result.count("|inline>") == 1
    assert result.count("[") == 4999


def test_inspection_reports_links_raw_html_and_what_is_left_open() -> None:
    report = inspect_markdown("[a \\[1\\]](#x) <b>bold</b>\n\n[c][d]\n\n[d]: #y\n")
    assert report.links == (RenderedLink(href="#x", text="a [1]"), RenderedLink(href="#y", text="c"))
    assert report.raw_html is True
    assert report.closed is True
    assert report.open_fence is None

    fence = inspect_markdown("Text\n\n````python\ncode")
    assert (fence.closed, fence.open_fence) == (False, "````")

    comment = inspect_markdown("Text\n\n<!-- never closed\n\nmore")
    assert (comment.closed, comment.open_fence, comment.raw_html) == (False, None, True)
