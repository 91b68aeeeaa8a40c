"""Markdown to HTML, the first stage of the render pipeline.

Raw HTML written into a message is shown as text, never parsed: the parser
runs with ``html=False``. Messages come from models, tools and importers we do
not control, so hostile markup (``<script>``, ``<svg onload>``, forms, iframes,
elements carrying our own panel ids) is escaped here, before the sanitizer ever
sees it; the sanitizer is the second, independent line of defence.

Images are rendered as their alt text: the page's CSP would block a remote
image anyway, and loading one would tell a third party who reads the thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from knowledgeweb.knowledge import nesting_exceeded
from knowledgeweb.knowledge.citations import MAX_NESTING


def _image_as_text(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env)
    return f"<em>{escapeHtml(alt)}</em>" if alt else ""


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "maxNesting": MAX_NESTING})
    md.add_render_rule("image", _image_as_text)
    return md


_MARKDOWN = _parser()

TOO_DEEP_NOTICE = (
    "This message is nested too deeply to show as formatted text without hiding part of it. "
    "It is shown exactly as written, and its links are not followed or checked."
)


def markdown_to_html(text: str) -> str:
    """Render CommonMark to HTML with raw HTML escaped as text.

    A message nested deeper than the parser goes is shown as written instead, the
    same decision ``find_citations`` takes, so nothing is hidden from the reader.
    """
    env: EnvType = {}
    tokens = _MARKDOWN.parse(text, env)
    if nesting_exceeded(tokens):
        return f"<p><em>{TOO_DEEP_NOTICE}</em></p>\n<pre><code>{escapeHtml(text)}</code></pre>\n"
    return _MARKDOWN.renderer.render(tokens, _MARKDOWN.options, env)
