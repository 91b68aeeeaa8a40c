"""Turning a retrieval result into tool content and its evidence artifact (docs/contract.md#formatting-and-budgets).

Layout of the content a model reads::

    Entity relations search results from lightrag (3 of 4 shown).
    How to read these results: ... (a legend, only when graph facts are present)

    [1] [citation:guide.md](#knowledge-source-<id>) (dataset: Docs; page 3)
    <excerpt, exactly as hashed>

    [2] Unattributed text (no citable source)
    <text>

    [3] Graph relation (unattributed graph fact): Alice -> Acme
    <description>
    Evidence: [1]

    [1 more result omitted to fit the output budget.]

Decisions the design leaves open, taken here:

- Hits are shown as a *prefix* of the result: the first hit that does not fit
  ends the listing. Relations only point at earlier positions, so a shown edge
  never points at omitted evidence. At most 100 hits are shown.
- ``max_total_chars`` bounds the whole content, header and omission notice
  included. ``max_chars_per_hit`` bounds each excerpt; a shortened excerpt ends
  with ``TRUNCATION_MARK`` and is hashed exactly as displayed.
- Hits whose text is blank are dropped without being counted: they carry
  nothing. Every other hit keeps its position in the result, which is the
  number shown in brackets and the number relations use for their evidence.
  A native result (no relations) numbers its non-blank hits 1, 2, 3, ...
- Optional fields that break a bound (a non-http(s) URL, page 0, a blank
  dataset name) are left out rather than invented or repaired; a title longer
  than 1024 characters is cut to fit.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from knowledgeweb.knowledge.bounds import (
    MAX_EXCERPT,
    MAX_LOCATOR,
    MAX_PAGES,
    MAX_RECORDS,
    MAX_TITLE,
    PROVIDER_RE,
    SHARED_VERSION,
    TRUNCATION_MARK,
    is_http_url,
    is_page,
    is_text,
)
from knowledgeweb.knowledge.ids import native_handle, shared_handle, source_id
from knowledgeweb.knowledge.types import RagflowLocator, RetrievalHit, RetrievalResult

# The phrases a model reads in tool content and a reader sees in the viewer: one place for both.
GRAPH_FACT = "unattributed graph fact"
UNATTRIBUTED_TEXT = "Unattributed text (no citable source)"
NO_RELATION_EVIDENCE = "none (no document evidence was retrieved for this relation)"
BUDGET_TRUNCATED = "Output truncated to fit the tool output budget"

#: Characters of the query a tool view keeps (the service refuses longer queries anyway).
MAX_VIEW_QUERY = 4000

#: Version of the server-owned tool view (``Message.tool_view``).
TOOL_VIEW_VERSION = 1


def tool_label(tool: str) -> str:
    """What a tool's results are called: "Knowledge search", "Entity relations search"."""
    return "Knowledge search" if tool == "knowledge_search" else tool.replace("_", " ").capitalize()


def summary_phrase(tool: str, provider: str, shown: int, total: int) -> str:
    """The first line of the tool content, and the summary the viewer shows."""
    if total == 0:
        return f"{tool_label(tool)} results from {provider}: nothing found."
    return f"{tool_label(tool)} results from {provider} ({shown} of {total} shown)."


def omitted_notice(omitted: int) -> str:
    """What the viewer says of hits the output budget left out."""
    noun = "result" if omitted == 1 else "results"
    return f"{omitted} more {noun} omitted to fit the output budget."


def omitted_phrase(omitted: int) -> str:
    """The same, as the bracketed line the model reads at the end of the tool content."""
    return f"[{omitted_notice(omitted)}]"


GRAPH_LEGEND = (
    "How to read these results: a numbered hit with a [citation:...] link is document evidence "
    "you may cite. Graph entities and relations are unattributed graph facts: never quote or cite "
    "them as evidence. Each relation's 'Evidence:' line names the hits that support it."
)

# Worst case of the omission notice, reserved up front so the total limit holds.
_NOTICE_RESERVE = len("\n\n[999999 more results omitted to fit the output budget.]")


@dataclass(frozen=True, slots=True)
class FormattedResult:
    """Tool content, its artifact, and the server's structured view of what the content shows.

    ``view`` is JSON (``Message.tool_view``): the tool, provider, hits shown of
    total, and each shown hit in order (kind, position, handle or graph fields,
    text). ``blocks`` are each shown hit's text in the content, for ``view_within``.
    """

    content: str
    artifact: dict[str, Any]
    view: dict[str, Any]
    blocks: tuple[str, ...]

    def view_within(self, content: str) -> dict[str, Any]:
        """The view of what ``content`` (this result cut by the output budget) still shows."""
        hits = [hit for hit, block in zip(self.view["hits"], self.blocks, strict=True) if block in content]
        shown = min(int(self.view["shown"]), len(hits))
        return {
            **self.view,
            "hits": hits,
            "shown": shown,
            "omitted": int(self.view["total"]) - shown,
            "budget_truncated": content != self.content,
        }


def format_result(
    result: RetrievalResult,
    *,
    max_chars_per_hit: int = 800,
    max_total_chars: int = 8000,
    native_nonce: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """Return ``(content, artifact)`` for one retrieval.

    A RAGFlow result whose every hit carries complete locators and names gives
    the native snapshot (docs/contract.md#native-ragflow-snapshots), its ids built from ``native_nonce`` (random
    per call unless given, for tests); anything else gives the shared envelope.
    """
    formatted = format_result_view(
        result,
        max_chars_per_hit=max_chars_per_hit,
        max_total_chars=max_total_chars,
        native_nonce=native_nonce,
    )
    return formatted.content, formatted.artifact


def format_result_view(
    result: RetrievalResult,
    *,
    max_chars_per_hit: int = 800,
    max_total_chars: int = 8000,
    native_nonce: str | None = None,
) -> FormattedResult:
    """``format_result`` with the structured view of the same hits (see ``FormattedResult``)."""
    if not PROVIDER_RE.fullmatch(result.provider):
        raise ValueError(f"invalid provider name {result.provider!r}")
    # Positions are the result's own (relations point at them), so blank hits keep their slot.
    hits = [(position, hit) for position, hit in enumerate(result.hits, start=1) if hit.text.strip()]
    native = _native_eligible(result.provider, [hit for _, hit in hits])
    if native:
        # No relation points into a native result, so N counts emitted hits only and stays
        # within the three digits a native id allows, however many blank hits came back.
        hits = list(enumerate((hit for _, hit in hits), start=1))
    nonce = native_nonce or secrets.token_hex(16)
    per_hit = max(1, min(max_chars_per_hit, MAX_EXCERPT))

    blocks: list[str] = []
    shown: list[dict[str, Any]] = []
    records: list[dict[str, Any]] = []
    seen_ids: set[str] = set()
    budget = max_total_chars - _NOTICE_RESERVE - len(_header(result, len(hits), len(hits)))
    used = 0
    for position, hit in hits[:MAX_RECORDS]:
        block, record, hit_view = _render_hit(
            hit, position, per_hit, result.provider, nonce if native else None
        )
        cost = len(block) + 2
        if used + cost > budget:
            break
        blocks.append(block)
        shown.append(hit_view)
        used += cost
        if record is not None and record["id"] not in seen_ids:
            seen_ids.add(record["id"])
            records.append(record)

    omitted = len(hits) - len(blocks)
    parts = [_header(result, len(blocks), len(hits)), *blocks]
    if omitted:
        parts.append(omitted_phrase(omitted))
    content = "\n\n".join(parts)
    if native:
        artifact: dict[str, Any] = {"knowledge_sources": {"version": 1, "sources": records}}
    else:
        artifact = {"knowledge_sources_version": SHARED_VERSION, "knowledge_sources": records}
    view: dict[str, Any] = {
        "version": TOOL_VIEW_VERSION,
        "tool": result.tool,
        "provider": result.provider,
        # The viewer says what was searched for when nothing was found.
        "query": result.query[:MAX_VIEW_QUERY],
        "shown": len(blocks),
        "total": len(hits),
        "omitted": omitted,
        "graph": any(hit.kind != "document" for hit in result.hits),
        "hits": shown,
        "budget_truncated": False,
    }
    return FormattedResult(content=content, artifact=artifact, view=view, blocks=tuple(blocks))


def _header(result: RetrievalResult, shown: int, total: int) -> str:
    summary = summary_phrase(result.tool, result.provider, shown, total)
    if total == 0:
        return summary
    if any(hit.kind != "document" for hit in result.hits):
        # Tell the model how to read a graph: what it may cite and what it may not.
        summary += "\n" + GRAPH_LEGEND
    return summary


def _native_eligible(provider: str, hits: list[RetrievalHit]) -> bool:
    if provider != "ragflow" or not hits:
        return False
    for hit in hits:
        loc = hit.locator
        if hit.kind != "document" or loc is None:
            return False
        if not all(is_text(value, MAX_LOCATOR) for value in (loc.dataset_id, loc.document_id, loc.chunk_id)):
            return False
        if not (is_text(hit.title, MAX_TITLE) and is_text(hit.dataset_name, MAX_TITLE)):
            return False
    return True


def _excerpt(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    if limit <= len(TRUNCATION_MARK):
        # Too small for the mark: the limit wins, and the native flag still records the cut.
        return text[:limit], True
    return text[: limit - len(TRUNCATION_MARK)].rstrip() + TRUNCATION_MARK, True


def _clean_title(title: str | None) -> str | None:
    # Cut first: a title blank within its first 1024 characters cannot be a record's title.
    title = None if title is None else title[:MAX_TITLE]
    if title is None or not title.strip():
        return None
    return title


def _render_hit(
    hit: RetrievalHit, position: int, per_hit: int, provider: str, nonce: str | None
) -> tuple[str, dict[str, Any] | None, dict[str, Any]]:
    """One hit's block of content, its evidence record (if citable), and its view."""
    excerpt, truncated = _excerpt(hit.text, per_hit)
    if hit.kind == "entity":
        kind = f" ({hit.entity_type})" if hit.entity_type else ""
        name = hit.title or hit.source_entity or ""
        head = f"[{position}] Graph entity{kind} ({GRAPH_FACT}): {name}"
        view = {"position": position, "kind": "entity", "name": name, "entity_type": hit.entity_type or ""}
        return f"{head.rstrip(': ')}\n{excerpt}", None, {**view, "text": excerpt}
    if hit.kind == "relation":
        source, target = hit.source_entity or "?", hit.target_entity or "?"
        head = f"[{position}] Graph relation ({GRAPH_FACT}): {source} -> {target}"
        if hit.evidence:
            evidence = "Evidence: " + ", ".join(f"[{p}]" for p in hit.evidence)
        else:
            evidence = f"Evidence: {NO_RELATION_EVIDENCE}."
        view = {"position": position, "kind": "relation", "source": source, "target": target}
        return (
            f"{head}\n{excerpt}\n{evidence}",
            None,
            {**view, "text": excerpt, "evidence": list(hit.evidence)},
        )
    title = _clean_title(hit.title)
    if title is None:
        view = {"position": position, "kind": "unattributed", "text": excerpt}
        return f"[{position}] {UNATTRIBUTED_TEXT}\n{excerpt}", None, view
    if nonce is not None and hit.locator is not None and hit.dataset_name is not None:
        block, record = _render_native(
            hit.locator, hit.dataset_name, position, excerpt, truncated, nonce, title
        )
        handle = native_handle(record["id"])
    else:
        block, record = _render_shared(hit, position, excerpt, provider, title)
        handle = shared_handle(record["id"])
    view = {"position": position, "kind": "document", "handle": handle, "title": title, "text": excerpt}
    return block, record, view


def _render_shared(
    hit: RetrievalHit, position: int, excerpt: str, provider: str, title: str
) -> tuple[str, dict[str, Any]]:
    dataset_name = hit.dataset_name if is_text(hit.dataset_name, MAX_TITLE) else None
    url = hit.url if is_http_url(hit.url) else None
    page = hit.page if is_page(hit.page) else None
    record_id = source_id(provider, title, excerpt, dataset_name, url, page)
    record: dict[str, Any] = {"id": record_id, "provider": provider, "title": title, "excerpt": excerpt}
    details = []
    if dataset_name is not None:
        record["dataset_name"] = dataset_name
        details.append(f"dataset: {dataset_name}")
    if url is not None:
        record["url"] = url
        details.append(f"url: {url}")
    if page is not None:
        record["page"] = page
        details.append(f"page {page}")
    suffix = f" ({'; '.join(details)})" if details else ""
    link = f"[citation:{_label(title)}](#{shared_handle(record_id)})"
    return f"[{position}] {link}{suffix}\n{excerpt}", record


def _render_native(
    locator: RagflowLocator,
    dataset_name: str,
    position: int,
    excerpt: str,
    truncated: bool,
    nonce: str,
    title: str,
) -> tuple[str, dict[str, Any]]:
    record_id = f"{nonce}-{position}"
    pages = [p for p in locator.pages if is_page(p)][:MAX_PAGES]
    record: dict[str, Any] = {
        "id": record_id,
        "provider": "ragflow",
        "dataset_id": locator.dataset_id,
        "document_id": locator.document_id,
        "chunk_id": locator.chunk_id,
        "dataset_name": dataset_name,
        "document_name": title,
        "text": excerpt,
        "truncated": truncated,
        "pages": pages,
    }
    page_note = f"; pages {', '.join(map(str, pages))}" if pages else ""
    head = f"[{position}] [citation:{position}](#{native_handle(record_id)}) dataset: {dataset_name}; document: {title}{page_note}"
    return f"{head}\n{excerpt}", record


def _label(title: str) -> str:
    # A title is arbitrary provider text: keep the link label on one line and its brackets balanced.
    return " ".join(title.replace("[", "(").replace("]", ")").split())
