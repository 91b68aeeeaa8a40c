"""Rewriting inline Markdown links for the export: code stays code, images stay images."""

from __future__ import annotations

from knowledgeweb.threads.links import rewrite_inline_links


def shout(label: str, href: str, original: str) -> str:
    return f"<{label}|{href}>"


def test_it_passes_each_inline_link_to_the_replacer() -> None:
    text = 'See [one](#a) and [two *bold*](#b "a title") then [three]( <#c> ).'
    assert rewrite_inline_links(text, shout) == "See <one|#a> and <two *bold*|#b> then <three|#c>."


def test_it_leaves_code_spans_and_code_blocks_alone() -> None:
    text = "Inline `[x](#a)` and ``[y](#b) ` still code``.\n\n```\n[z](#c)\n```\n\n    [w](#d)\n\n[v](#e)\n"
    expected = (
        "Inline `[x](#a)` and ``[y](#b) ` still code``.\n\n```\n[z](#c)\n```\n\n    [w](#d)\n\n<v|#e>\n"
    )
    assert rewrite_inline_links(text, shout) == expected


def test_it_keeps_images_and_escaped_brackets() -> None:
    text = r"![alt](#a) \[not](#b) [yes](#c)"
    assert rewrite_inline_links(text, shout) == r"![alt](#a) \[not](#b) <yes|#c>"


def test_it_handles_nested_brackets_in_the_label() -> None:
    assert rewrite_inline_links("[a [b] c](#x)", shout) == "<a [b] c|#x>"


def test_it_leaves_reference_links_and_unclosed_links_as_written() -> None:
    text = "[ref][1] and [open](#x and [plain]\n\n[1]: #y\n"
    assert rewrite_inline_links(text, shout) == text


def test_it_leaves_hostile_unclosed_syntax_as_written() -> None:
    # Thousands of unclosed brackets, backtick runs and titles (scans are bounded, see links.py).
    text = "[" * 20000 + "`" * 300 + '[a]( "' * 5000
    assert rewrite_inline_links(text, shout) == text
