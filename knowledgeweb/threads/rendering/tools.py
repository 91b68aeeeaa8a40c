"""Tool messages as readers see them, built from structure, never read back from text (docs/architecture.md#pages-and-dom-hooks).

A search the retrieval service ran carries its server-owned view
(``Message.tool_view``): the hits shown of total, each hit's kind and fields,
graph edges and their evidence positions, truncation. The blocks shown here
come from that view. Only the server writes it, so the viewer may present it as
the server's account; a caller cannot supply one (callers' artifacts never
reach it).

What a document hit displays still comes from the message's *validated*
evidence (the reader's trust decision): a hit whose handle did not validate is
shown as unverified text.

Every other tool message (appended by a caller, imported, or a failed search)
is shown generically: its content as plain text, at most ``PREVIEW_CHARS`` of
it inline, and a link to the whole output. Two kinds of imported tool message
say what the server found of their evidence (``Message.evidence_check``): one
whose receipt checked shows the evidence the server signed (its validated
sources), never the imported text; one whose evidence was stripped says so.

The phrases (summary, omission notice, graph-fact badges) come from
``knowledgeweb.knowledge.formatting``, where the model's text is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from knowledgeweb.knowledge import Evidence
from knowledgeweb.knowledge.formatting import (
    BUDGET_TRUNCATED,
    GRAPH_FACT,
    NO_RELATION_EVIDENCE,
    TOOL_VIEW_VERSION,
    omitted_notice,
    summary_phrase,
    tool_label,
)

BlockKind = Literal["source", "unverified", "unattributed", "entity", "relation", "text"]

#: Characters of a tool message shown inline; the rest is one link away.
PREVIEW_CHARS = 4000


@dataclass(frozen=True, slots=True)
class EvidenceLink:
    """A relation's pointer to the block holding its evidence."""

    position: int
    shown: bool
    source: Evidence | None


@dataclass(frozen=True, slots=True)
class ToolBlock:
    """One displayed hit of a tool message."""

    kind: BlockKind
    heading: str
    body: str
    position: int | None = None
    source: Evidence | None = None
    evidence: tuple[int, ...] = ()
    links: tuple[EvidenceLink, ...] = ()
    #: The handle a document hit named when its evidence failed validation (an unverified block).
    handle: str = ""


@dataclass(frozen=True, slots=True)
class ToolView:
    """What the viewer shows of a tool message."""

    header: str
    blocks: tuple[ToolBlock, ...]
    notice: str = ""
    # Generic view: the shown prefix of the content, and whether more is one link away.
    structured: bool = True
    full_chars: int = 0
    cut: bool = False
    #: An imported message's evidence: "signed" (receipt checked), "unsigned" (stripped), or "".
    evidence: str = ""

    @property
    def phrases(self) -> Mapping[str, str]:
        return PHRASES


PHRASES: Mapping[str, str] = {"graph_fact": GRAPH_FACT, "no_relation_evidence": NO_RELATION_EVIDENCE}


def build_tool_view(content: str, view: Any, sources: Mapping[str, Evidence]) -> ToolView:
    """The display of a tool message: from the server's ``view`` when it has one, else generic."""
    if not _is_view(view):
        return generic_view(content)
    blocks = [_block(hit, sources) for hit in view["hits"] if isinstance(hit, dict)]
    total = int(view["total"])
    # What is shown is what the view still holds: the output budget may have cut hits after
    # the search counted them (views stored before that was recorded say so here too).
    shown = min(int(view["shown"]), len(blocks))
    notices = []
    if total > shown:
        notices.append(omitted_notice(total - shown))
    if view.get("budget_truncated"):
        notices.append(f"{BUDGET_TRUNCATED}.")
    tool, provider = str(view["tool"]), str(view["provider"])
    if total == 0:
        query = view.get("query")
        searched = f"“{query}”" if isinstance(query, str) and query else "this search"
        header = f"Nothing found for {searched} ({tool_label(tool)}, {provider})."
    else:
        header = summary_phrase(tool, provider, shown, total)
    return ToolView(header=header, blocks=_link_relations(blocks), notice=" ".join(notices))


#: The header of an imported tool message whose receipt checked.
SIGNED_HEADER = "Evidence this server returned to you, signed (imported)"
#: The notice of an imported tool message whose evidence was stripped.
UNSIGNED_NOTICE = "Evidence imported without a valid signature: not checked by this server."


def signed_view(sources: Mapping[str, Evidence]) -> ToolView:
    """An imported tool message whose receipt checked: the signed evidence, one block a source.

    Built from the validated sources only: the imported content (which clients rewrite) is
    not shown as the server's.
    """
    blocks = tuple(
        ToolBlock("source", source.title, source.excerpt, position, source)
        for position, source in enumerate(sources.values(), start=1)
    )
    return ToolView(header=SIGNED_HEADER, blocks=blocks, evidence="signed")


def unsigned_view(content: str) -> ToolView:
    """An imported tool message whose evidence was stripped: shown generically, saying so."""
    view = generic_view(content)
    return ToolView(
        header=view.header,
        blocks=view.blocks,
        notice=UNSIGNED_NOTICE,
        structured=False,
        full_chars=view.full_chars,
        cut=view.cut,
        evidence="unsigned",
    )


def generic_view(content: str) -> ToolView:
    shown = content[:PREVIEW_CHARS]
    return ToolView(
        header="",
        blocks=(ToolBlock(kind="text", heading="", body=shown),),
        structured=False,
        full_chars=len(content),
        cut=len(shown) < len(content),
    )


def _is_view(view: Any) -> bool:
    return (
        isinstance(view, dict)
        and view.get("version") == TOOL_VIEW_VERSION
        and isinstance(view.get("hits"), list)
        and all(isinstance(view.get(k), str) for k in ("tool", "provider"))
        and all(isinstance(view.get(k), int) for k in ("shown", "total"))
    )


def _block(hit: dict[str, Any], sources: Mapping[str, Evidence]) -> ToolBlock:
    position = hit.get("position") if isinstance(hit.get("position"), int) else None
    text = str(hit.get("text", ""))
    kind = hit.get("kind")
    if kind == "document":
        source = sources.get(str(hit.get("handle", "")))
        if source is not None:
            return ToolBlock("source", source.title, source.excerpt, position, source)
        handle = hit.get("handle")
        return ToolBlock(
            "unverified",
            str(hit.get("title", "")),
            text,
            position,
            handle=handle if isinstance(handle, str) else "",
        )
    if kind == "unattributed":
        return ToolBlock("unattributed", "", text, position)
    if kind == "entity":
        name, entity_type = str(hit.get("name", "")), str(hit.get("entity_type", ""))
        return ToolBlock("entity", f"{name} ({entity_type})" if entity_type else name, text, position)
    if kind == "relation":
        evidence = tuple(p for p in hit.get("evidence", ()) if isinstance(p, int))
        heading = f"{hit.get('source', '?')} -> {hit.get('target', '?')}"
        return ToolBlock("relation", heading, text, position, evidence=evidence)
    return ToolBlock("text", "", text, position)


def _link_relations(blocks: list[ToolBlock]) -> tuple[ToolBlock, ...]:
    by_position = {b.position: b for b in blocks if b.position is not None}
    linked = []
    for block in blocks:
        if block.kind == "relation" and block.evidence:
            links = tuple(
                EvidenceLink(p, p in by_position, by_position[p].source if p in by_position else None)
                for p in block.evidence
            )
            block = ToolBlock(
                block.kind, block.heading, block.body, block.position, block.source, block.evidence, links
            )
        linked.append(block)
    return tuple(linked)
