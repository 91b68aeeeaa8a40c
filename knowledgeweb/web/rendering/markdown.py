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


def _image_as_text(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env)
    return f"<em>{escapeHtml(alt)}</em>" if alt else ""


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False})
    md.add_render_rule("image", _image_as_text)
    return md


_MARKDOWN = _parser()


def markdown_to_html(text: str) -> str:
    """Render CommonMark to HTML with raw HTML escaped as text."""
    return _MARKDOWN.render(text)
