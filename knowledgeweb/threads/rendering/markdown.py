"""Markdown to HTML, the first stage of the render pipeline.

The tokens come from ``knowledgeweb.knowledge.linkgrammar``: the one parser
configuration, so the links the viewer turns into ``<a>`` are exactly the links
the grammar reports. Raw HTML written into a message is shown as text, never
parsed (``html=False``). Messages come from models, tools and importers we do
not control, so hostile markup (``<script>``, ``<svg onload>``, forms, iframes,
elements carrying our own panel ids) is escaped here, before the sanitizer ever
sees it; the sanitizer is the second, independent line of defence.

Images are rendered as their alt text: the page's CSP would block a remote
image anyway, and loading one would tell a third party who reads the thread.

A citation link is rendered by the ``citation`` rule, keyed by the grammar's index of
the link (``linkgrammar.link_index``): the link and its label give way to the slot the
pipeline handed over for that citation's hook (``CITATION_SLOTS``), so the page shows a
hook exactly where the grammar found a citation, and nothing of the link's own markup.

A table cell's alignment is a class (``align-left``, ``align-center``,
``align-right``), never markdown-it's ``style`` attribute: the CSP forbids inline
styles, and the sanitizer allows no ``style`` at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from knowledgeweb.knowledge.linkgrammar import (
    MAX_TABLE_CELLS,
    ParsedMarkdown,
    link_index,
    markdown_parser,
    parse_markdown,
)

#: The env key holding, for each citation link's index in ``ParsedMarkdown.links``, the text
#: the ``citation`` rule writes in its place.
CITATION_SLOTS = "knowledgeweb_citation_slots"


def _image_as_text(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env)
    return f"<em>{escapeHtml(alt)}</em>" if alt else ""


#: markdown-it's alignment styles and the classes that stand for them.
ALIGN_CLASSES = {
    "text-align:left": "align-left",
    "text-align:center": "align-center",
    "text-align:right": "align-right",
}


def _cell_open(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    # The token is read, never changed: the export reads the same style to write ``:--:``.
    token = tokens[idx]
    align = ALIGN_CLASSES.get(str(token.attrGet("style") or ""))
    return f'<{token.tag} class="{align}">' if align else f"<{token.tag}>"


def _citation(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """A citation link's slot (its hook is filled in once the message's markup is sanitized)."""
    return str(env[CITATION_SLOTS][link_index(tokens[idx])])


def _link_end(tokens: Sequence[Token], idx: int) -> int:
    """The index of the ``link_close`` that closes the ``link_open`` at ``idx``."""
    depth = 0
    for end in range(idx, len(tokens)):
        depth += {"link_open": 1, "link_close": -1}.get(tokens[end].type, 0)
        if depth == 0:
            return end
    return len(tokens) - 1


class _Renderer(RendererHTML):
    """markdown-it's renderer, where a citation link with its label is one ``citation`` token."""

    def renderInline(self, tokens: Sequence[Token], options: OptionsDict, env: EnvType) -> str:  # noqa: N802 - markdown-it names it
        slots: Mapping[int, str] = env.get(CITATION_SLOTS) or {}
        if not slots:
            return str(super().renderInline(tokens, options, env))
        out: list[str] = []
        idx = 0
        while idx < len(tokens):
            token = tokens[idx]
            if token.type == "link_open" and link_index(token) in slots:
                out.append(self.rules["citation"](tokens, idx, options, env))
                idx = _link_end(tokens, idx) + 1
                continue
            rule = self.rules.get(token.type)
            out.append(
                rule(tokens, idx, options, env) if rule else self.renderToken(tokens, idx, options, env)
            )
            idx += 1
        return "".join(out)


def _renderer() -> RendererHTML:
    # A renderer of our own: the shared parser (and its default renderer) stays untouched.
    renderer = _Renderer()
    renderer.rules["citation"] = _citation.__get__(renderer)
    renderer.rules["image"] = _image_as_text.__get__(renderer)
    renderer.rules["th_open"] = _cell_open.__get__(renderer)
    renderer.rules["td_open"] = _cell_open.__get__(renderer)
    return renderer


_RENDERER = _renderer()

TOO_DEEP_NOTICE = (
    "This message is nested too deeply to show as formatted text without hiding part of it. "
    "It is shown exactly as written, and its links are not followed or checked."
)


TABLES_AS_TEXT_NOTICE = (
    f"This message's tables hold more than {MAX_TABLE_CELLS:,} cells: "
    "they are shown as the text they were written as."
)

TOO_LARGE_NOTICE = (
    "This message holds too much formatting to show as formatted text. "
    "It is shown exactly as written, and its links are not followed or checked."
)


def verbatim_html(text: str, notice: str = TOO_DEEP_NOTICE) -> str:
    """A message shown whole as written, with the notice saying why.

    Only ``&`` and ``<`` are escaped: nothing else starts markup in an element's text,
    and the sanitizer writes ``>`` and quotes out escaped anyway (the page is the same).
    Each entity costs the sanitizer's tokenizer several steps, and a hostile message
    shown as written may be a third ``>`` (15-level quotes): escaping them made it the
    costliest input to show.
    """
    escaped = text.replace("&", "&amp;").replace("<", "&lt;")
    return f"<p><em>{notice}</em></p>\n<pre><code>{escaped}</code></pre>\n"


def parsed_to_html(parsed: ParsedMarkdown, citation_slots: Mapping[int, str] | None = None) -> str:
    """Render a parse to HTML; a message nested too deeply or holding too much structure
    (``linkgrammar.MAX_TOKENS``) is shown as written; tables read as text say so.

    ``citation_slots`` maps a citation link's index in ``parsed.links`` to the text written
    in place of the link and its label; links it does not name render as links.
    """
    if parsed.too_deep:
        return verbatim_html(parsed.text)
    if parsed.too_large:
        return verbatim_html(parsed.text, TOO_LARGE_NOTICE)
    env = {**parsed.env, CITATION_SLOTS: citation_slots} if citation_slots else parsed.env
    html = _RENDERER.render(parsed.tokens, markdown_parser().options, env)
    return f"<p><em>{TABLES_AS_TEXT_NOTICE}</em></p>\n{html}" if parsed.tables_as_text else html


def markdown_to_html(text: str) -> str:
    """Render CommonMark to HTML with raw HTML escaped as text."""
    return parsed_to_html(parse_markdown(text))
