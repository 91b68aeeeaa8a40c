"""The sanitizer on hostile HTML, directly (the markdown stage never lets raw HTML through)."""

from __future__ import annotations

import pytest

from knowledgeweb.threads.rendering.sanitizer import link_kind, sanitize_html


def test_it_drops_script_elements_and_keeps_their_text_inert() -> None:
    html = sanitize_html("<p>hi</p><script>alert(1)</script>")
    assert "<script" not in html
    assert html == "<p>hi</p>alert(1)"


@pytest.mark.parametrize(
    "hostile",
    [
        '<p onclick="alert(1)">x</p>',
        '<a href="#x" onmouseover="alert(1)">x</a>',
        '<svg onload="alert(1)"><circle r="1"/></svg>',
        '<img src="x" onerror="alert(1)">',
        '<iframe src="https://evil.example/"></iframe>',
        '<form action="https://evil.example/"><input name="q"><button>go</button></form>',
        '<object data="x"></object><embed src="x">',
        '<math><mi xlink:href="javascript:alert(1)">x</mi></math>',
        '<base href="https://evil.example/"><meta http-equiv="refresh" content="0">',
        '<p style="background:url(javascript:alert(1))">x</p>',
        "<style>body{display:none}</style>",
    ],
)
def test_it_strips_active_content_and_event_handlers(hostile: str) -> None:
    html = sanitize_html(hostile).lower()
    for marker in ("<svg", "<img", "<iframe", "<form", "<input", "<object", "<embed", "<math", "<base"):
        assert marker not in html
    for marker in ("<meta", "<style", "onload", "onerror", "onclick", "onmouseover", "style=", "javascript"):
        assert marker not in html


@pytest.mark.parametrize(
    "href",
    [
        "javascript:alert(1)",
        " JaVaScRiPt:alert(1)",
        "jav&#x09;ascript:alert(1)",
        "java\nscript:alert(1)",
        "vbscript:msgbox(1)",
        "data:text/html,<script>alert(1)</script>",
        "//evil.example/",
        "/admin/",
        "relative/path",
        "https:evil.example",
        "file:///etc/passwd",
        "ftp://files.example/#knowledge-source-" + "a" * 32,
        "javascript:alert(1)//#knowledge-source-" + "a" * 32,
    ],
)
def test_it_drops_hrefs_outside_http_https_mailto_and_fragments(href: str) -> None:
    html = sanitize_html(f'<a href="{href}">x</a>')
    assert html == "<a>x</a>"


def test_it_keeps_safe_links_and_marks_external_ones_noopener_noreferrer() -> None:
    html = sanitize_html(
        '<a href="https://example.org/a?b=1&amp;c=2" rel="opener" target="_blank">e</a>'
        '<a href="mailto:someone@example.org">m</a><a href="#section">f</a>'
    )
    assert html == (
        '<a href="https://example.org/a?b=1&amp;c=2" rel="noopener noreferrer">e</a>'
        '<a href="mailto:someone@example.org" rel="noopener noreferrer">m</a>'
        '<a href="#section">f</a>'
    )


def test_it_prefixes_user_ids_and_names_so_they_cannot_clobber_panel_anchors() -> None:
    real = "knowledge-source-" + "a" * 32
    html = sanitize_html(f'<h2 id="{real}">t</h2><a name="{real}" href="#x">n</a><p id="sources">p</p>')
    assert f'id="user-content-{real}"' in html
    assert f'name="user-content-{real}"' in html
    assert 'id="user-content-sources"' in html
    assert f'id="{real}"' not in html
    assert f'name="{real}"' not in html


def test_it_prefixes_even_ids_that_already_carry_the_prefix() -> None:
    html = sanitize_html('<p id="user-content-x">p</p>')
    assert html == '<p id="user-content-user-content-x">p</p>'


def test_it_keeps_only_language_classes_on_code() -> None:
    html = sanitize_html(
        '<code class="language-python">a</code><code class="citation">b</code><p class="citation">c</p>'
    )
    assert html == '<code class="language-python">a</code><code>b</code><p>c</p>'


def test_it_refuses_data_attributes_so_content_cannot_forge_citation_hooks() -> None:
    html = sanitize_html('<a data-citation="resolved" data-source-id="x" href="#x">forged</a>')
    assert html == '<a href="#x">forged</a>'


@pytest.mark.parametrize(
    ("href", "kind"),
    [
        ("#knowledge-source-x", "fragment"),
        ("https://example.org/", "external"),
        ("HTTP://EXAMPLE.ORG", "external"),
        ("mailto:a@example.org", "external"),
        ("mailto:", None),
        ("https://", None),
        ("ftp://example.org/", None),
    ],
)
def test_it_classifies_links_by_scheme(href: str, kind: str | None) -> None:
    assert link_kind(href) == kind
