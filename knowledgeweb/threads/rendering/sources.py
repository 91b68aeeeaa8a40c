"""Entries of the sources panel (docs/architecture.md#pages-and-dom-hooks).

An entry's body depends only on its evidence, so it is rendered once, stored
with the render of the tool message that carries it, and a page only wraps it
with what depends on the thread: the citation count, the places that cite it
(backlinks) and the closest passages of their claims, marked.

The excerpt is written as its sentences (``knowledge.text``), each a
``<span data-sentence="n">``, so that a page or a script can mark one without
re-reading the text; the spans and the text between them are, joined, exactly
the excerpt as retrieved.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from html import escape

from django.utils.safestring import SafeString

from knowledgeweb.knowledge import Evidence
from knowledgeweb.knowledge.fragments import text_fragment_url
from knowledgeweb.knowledge.text import excerpt_segments
from knowledgeweb.library.passages import passage_page, passage_path

#: Only the local index can show a passage in its document (docs/decisions/0026-evidence-in-its-document.md).
LOCAL_PROVIDER = "local"
_SENTENCE_OPEN = '<span class="excerpt-sentence" data-sentence="{}">'


def excerpt_html(excerpt: str) -> str:
    """The excerpt, escaped, as sentence spans, paragraph breaks and the spaces between them."""
    parts: list[str] = []
    for segment in excerpt_segments(excerpt):
        # ``escape(text, quote=False)``, inlined: this runs for every sentence of every source.
        text = segment.text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        if segment.kind == "sentence":
            parts.append(_SENTENCE_OPEN.format(segment.index) + text + "</span>")
        elif segment.kind == "break":
            parts.append(f'<span class="excerpt-break">{text}</span>')
        else:
            parts.append(text)
    return "".join(parts)


def mark_sentences(html: str, sentences: Collection[int]) -> str:
    """``html`` (from ``excerpt_html``) with the given sentences wrapped in ``<mark>``.

    A sentence's text is escaped and holds no tag, so it ends at the next ``</span>``.
    """
    for index in sorted(sentences):
        opening = _SENTENCE_OPEN.format(index)
        start = html.find(opening)
        if start < 0:
            continue
        inner = start + len(opening)
        end = html.find("</span>", inner)
        if end < 0:
            continue
        html = f"{html[:inner]}<mark>{html[inner:end]}</mark>{html[end:]}"
    return html


def _escape(value: object) -> str:
    """What ``format_html`` makes of a plain value (``django.utils.html.escape``), without its
    lazy wrapper and ``SafeString`` per call: a long thread's re-render writes thousands of entries."""
    return escape(str(value))


def source_entry_body(source: Evidence, *, page: str | None = None) -> str:
    """The entry's inner HTML: title, provider, dataset, pages, URL and the exact excerpt.

    ``page`` is ``library.passages.passage_page()``, when the caller has it already.
    """
    meta = [f'<div><dt>Provider</dt><dd data-field="provider">{_escape(source.provider)}</dd></div>']
    if source.dataset_name:
        meta.append(
            f'<div><dt>Dataset</dt><dd data-field="dataset">{_escape(source.dataset_name)}</dd></div>'
        )
    if source.pages:
        pages = ", ".join(str(page) for page in source.pages)
        meta.append(f'<div><dt>Page</dt><dd data-field="page">{_escape(pages)}</dd></div>')
    if source.url:
        at_passage = text_fragment_url(source.url, source.excerpt)
        url = _escape(source.url)
        passage = (
            f' <a class="source-at-passage" data-field="url-passage" href="{_escape(at_passage)}" '
            'rel="noopener noreferrer">Open at the passage</a>'
            if at_passage
            else ""
        )
        meta.append(
            f'<div><dt>URL</dt><dd><a data-field="url" href="{url}" rel="noopener noreferrer">{url}</a>'
            f"{passage}</dd></div>"
        )
    note = (
        '<p class="source-note">This excerpt was shortened when it was retrieved.</p>'
        if source.truncated
        else ""
    )
    document = ""
    if source.provider == LOCAL_PROVIDER and source.dataset_name and not source.truncated:
        # The local index finds the chunk again by its collection and exact text; the page
        # checks the reader's access to that collection.
        path = passage_path(collection_name=source.dataset_name, excerpt=source.excerpt, page=page)
        document = (
            f'<p class="source-open"><a data-field="document" href="{_escape(path)}">Open in document</a></p>'
        )
    return (
        f'<p class="source-title" data-field="title">{_escape(source.title)}</p>'
        + '<dl class="source-meta">'
        + "".join(meta)
        + "</dl>"
        # A scrolling box must take keyboard focus to be scrolled without a mouse (axe:
        # scrollable-region-focusable); the group's name says what the stop is.
        + '<div class="source-excerpt" data-field="excerpt" tabindex="0" role="group" aria-label="Excerpt">'
        + excerpt_html(source.excerpt)
        + "</div>"
        + note
        + document
    )


def source_entry_parts(source: Evidence, *, page: str | None = None) -> list[str]:
    """A panel entry as stored at write: its opening tag (without the citation count) and body.

    Handles and ids are validated hex; everything is escaped anyway, here, once. ``page`` as
    for ``source_entry_body``.
    """
    opening = (
        f'<li class="source" id="{escape(source.handle)}" tabindex="-1" data-source-entry '
        f'data-source-id="{escape(source.id)}" data-form="{escape(source.form)}" '
        f'data-truncated="{"true" if source.truncated else "false"}"'
    )
    return [opening, source_entry_body(source, page=page)]


def source_entries(sources: Mapping[str, Evidence]) -> dict[str, list[str]]:
    """``source_entry_parts`` of each of a tool message's sources, by handle."""
    page = passage_page() if sources else None
    return {handle: source_entry_parts(source, page=page) for handle, source in sources.items()}


def _attribute(opening: str, name: str) -> str:
    """An attribute of the entry's stored opening tag (written escaped by ``source_entry_parts``)."""
    marker = f' {name}="'
    start = opening.find(marker)
    if start < 0:
        return ""
    start += len(marker)
    return opening[start : opening.find('"', start)]


def source_entry(
    parts: Sequence[str],
    citations: int,
    *,
    number: int | None = None,
    marks: Collection[int] = (),
    backlinks: Sequence[tuple[str, str]] = (),
    note: str = "",
    elsewhere: Sequence[tuple[str, str, str]] = (),
) -> SafeString:
    """The whole panel entry from its stored parts: anchor (``id`` is the handle), body and count.

    ``number`` is the source's number in the thread, ``marks`` the excerpt sentences closest
    to the claims that cite it, ``backlinks`` each citing place as (anchor, words), ``note``
    what tells it apart from another source of the same title, and ``elsewhere`` the claims of
    the thread's other page windows citing it, one per window as (href, anchor, words).
    """
    opening, body = parts
    handle = _attribute(opening, "id")
    source_id = _attribute(opening, "data-source-id")
    if note:
        # Told apart from another source of the same title: the note joins the title's text.
        end = body.find("</p>")
        if end >= 0:
            body = f'{body[:end]}<span class="source-title-note"> ({escape(note)})</span>{body[end:]}'
    if marks:
        body = mark_sentences(body, marks)
    if citations:
        count = f"Cited {citations} time{'' if citations == 1 else 's'}"
    else:
        count = "Not cited in this window" if elsewhere else "Retrieved, not cited"
    # The number opens the source with every claim citing it (the thread's), with a script; it
    # is the entry's own anchor without one.
    badge = (
        f'<a class="source-number" data-source-number data-panel-source href="#{handle}" '
        f'data-source-id="{source_id}" aria-label="Source [{number}]: open it with the claims citing it">'
        f"[{number}]</a> "
        if number
        else ""
    )
    places = ""
    if backlinks:
        # Anchors are the hooks' own ids and the words are ours: nothing here comes from a message.
        links = ", ".join(
            f'<a href="#{escape(a)}" data-backlink="{escape(a)}">{escape(w)}</a>' for a, w in backlinks
        )
        places = f'<p class="source-backlinks" data-backlinks>Cited in {links}</p>'
    if elsewhere:
        # A link to another window's URL and the claim's anchor: it works without a script, and
        # the script jumps in place when that window was loaded into the page.
        links = ", ".join(
            f'<a href="{escape(h)}" data-backlink="{escape(a)}" data-backlink-window>{escape(w)}</a>'
            for h, a, w in elsewhere
        )
        places += f'<p class="source-backlinks" data-backlinks-elsewhere>Cited in other windows: {links}</p>'
    return SafeString(  # both parts were escaped or built by source_entry_body at write
        f'{opening} data-citations="{citations}">{badge}{body}<p class="source-count">{count}</p>{places}</li>'
    )
