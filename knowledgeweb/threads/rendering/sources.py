"""Entries of the sources panel (docs/architecture.md#pages-and-dom-hooks).

An entry's body depends only on its evidence, so it is rendered once, stored
with the render of the tool message that carries it, and a page only wraps it
with the entry's citation count.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from django.utils.html import format_html
from django.utils.safestring import SafeString

from knowledgeweb.knowledge import Evidence


def source_entry_body(source: Evidence) -> str:
    """The entry's inner HTML: title, provider, dataset, pages, URL and the exact excerpt."""
    meta = [format_html('<div><dt>Provider</dt><dd data-field="provider">{}</dd></div>', source.provider)]
    if source.dataset_name:
        meta.append(
            format_html('<div><dt>Dataset</dt><dd data-field="dataset">{}</dd></div>', source.dataset_name)
        )
    if source.pages:
        pages = ", ".join(str(page) for page in source.pages)
        meta.append(format_html('<div><dt>Page</dt><dd data-field="page">{}</dd></div>', pages))
    if source.url:
        meta.append(
            format_html(
                '<div><dt>URL</dt><dd><a data-field="url" href="{}" rel="noopener noreferrer">{}</a></dd></div>',
                source.url,
                source.url,
            )
        )
    note = (
        '<p class="source-note">This excerpt was shortened when it was retrieved.</p>'
        if source.truncated
        else ""
    )
    return (
        format_html('<p class="source-title" data-field="title">{}</p>', source.title)
        + '<dl class="source-meta">'
        + "".join(meta)
        + "</dl>"
        # A scrolling box must take keyboard focus to be scrolled without a mouse (axe:
        # scrollable-region-focusable); the group's name says what the stop is.
        + format_html(
            '<div class="source-excerpt" data-field="excerpt" tabindex="0" role="group" '
            'aria-label="Excerpt">{}</div>',
            source.excerpt,
        )
        + note
    )


def source_entry_parts(source: Evidence) -> list[str]:
    """A panel entry as stored at write: its opening tag (without the citation count) and body.

    Handles and ids are validated hex; everything is escaped anyway, here, once.
    """
    opening = (
        f'<li class="source" id="{escape(source.handle)}" tabindex="-1" data-source-entry '
        f'data-source-id="{escape(source.id)}" data-form="{escape(source.form)}" '
        f'data-truncated="{"true" if source.truncated else "false"}"'
    )
    return [opening, source_entry_body(source)]


def source_entry(parts: Sequence[str], citations: int) -> SafeString:
    """The whole panel entry from its stored parts: anchor (``id`` is the handle), body and count."""
    opening, body = parts
    count = f"Cited {citations} time{'' if citations == 1 else 's'}" if citations else "Retrieved, not cited"
    return SafeString(  # both parts were escaped or built by source_entry_body at write
        f'{opening} data-citations="{citations}">{body}<p class="source-count">{count}</p></li>'
    )
