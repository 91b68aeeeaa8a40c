"""Tool messages as readers see them: hits, graph facts and edges (SPEC §8).

The content of a retrieval tool message follows the layout of
``knowledgeweb.knowledge.format_result``: a header paragraph, then one block per
hit starting ``[N] ``, then maybe an omission notice. This module reads that
layout back into blocks for display. Anything it does not recognise is shown as
plain text, never interpreted.

What a cited block displays comes from the *validated* evidence of the message,
never from the content: a block whose citation did not validate is shown as
unverified text. A cited block's body is its evidence excerpt, so text inside an
excerpt that imitates a block start cannot split it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from knowledgeweb.knowledge import Evidence, classify_href

BlockKind = Literal["source", "unverified", "unattributed", "entity", "relation", "text"]

_BLOCK_START = re.compile(r"\[([1-9][0-9]{0,5})\] ")
_NEXT_BLOCK = re.compile(r"\n\n(?=\[[1-9][0-9]{0,5}\] )")
# A label never holds brackets (format_result swaps them for parentheses) and repeats are
# bounded, so a hostile line of repeated "[citation:" costs linear time, not quadratic.
_CITATION = re.compile(r"\[citation:([^\[\]\n]{0,2048})\]\((#[^)\s]{0,256})\)")
_RELATION = re.compile(r"Graph relation \(unattributed graph fact\): (.*)")
_ENTITY = re.compile(r"Graph entity(?: \(([^)\n]*)\))? \(unattributed graph fact\)(?:: (.*))?")
_EVIDENCE_LINE = re.compile(r"Evidence: ((?:\[[1-9][0-9]{0,5}\](?:, )?)+)$")
_EVIDENCE_NONE = re.compile(r"Evidence: none\b.*$")
_POSITION = re.compile(r"\[([1-9][0-9]{0,5})\]")


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
    # Relations: positions of the blocks that hold their document evidence.
    evidence: tuple[int, ...] = ()
    links: tuple[EvidenceLink, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolView:
    """A tool message read back into blocks."""

    header: str
    blocks: tuple[ToolBlock, ...]
    notice: str = ""


def read_tool_content(content: str, sources: Mapping[str, Evidence]) -> ToolView:
    """Split tool content into display blocks, trusting only ``sources`` for citations."""
    header, sep, rest = content.partition("\n\n")
    if not sep or not _BLOCK_START.match(rest):
        return ToolView(header="", blocks=(ToolBlock(kind="text", heading="", body=content),))
    blocks: list[ToolBlock] = []
    notice = ""
    cursor = 0
    while cursor < len(rest):
        start = _BLOCK_START.match(rest, cursor)
        if start is None:
            notice = rest[cursor:].strip()
            break
        block, cursor = _read_block(rest, start, sources)
        blocks.append(block)
        if rest.startswith("\n\n", cursor):
            cursor += 2
        elif cursor < len(rest):
            # The next text does not start a block: keep it visible as text.
            blocks.append(ToolBlock(kind="text", heading="", body=rest[cursor:].strip()))
            break
    # The header's first line is its summary; later lines guide the model, not the reader.
    return ToolView(header=header.split("\n", 1)[0], blocks=_link_relations(blocks), notice=notice)


def _link_relations(blocks: list[ToolBlock]) -> tuple[ToolBlock, ...]:
    by_position = {b.position: b for b in blocks if b.position is not None}
    linked = []
    for block in blocks:
        if block.kind == "relation" and block.evidence:
            links = tuple(
                EvidenceLink(p, p in by_position, by_position[p].source if p in by_position else None)
                for p in block.evidence
            )
            block = replace(block, links=links)
        linked.append(block)
    return tuple(linked)


def _read_block(rest: str, start: re.Match[str], sources: Mapping[str, Evidence]) -> tuple[ToolBlock, int]:
    position = int(start.group(1))
    line_end = rest.find("\n", start.end())
    head_end = len(rest) if line_end == -1 else line_end
    head = rest[start.end() : head_end]

    cited = _CITATION.search(head)
    if cited is not None:
        source = _validated(cited.group(2), sources)
        if source is not None and rest.startswith("\n" + source.excerpt, head_end):
            end = head_end + 1 + len(source.excerpt)
            return ToolBlock("source", source.title, source.excerpt, position, source), end

    following = _NEXT_BLOCK.search(rest, head_end)
    end = len(rest) if following is None else following.start()
    body = rest[head_end + 1 : end] if head_end < end else ""

    if cited is not None:
        heading = _CITATION.sub(lambda m: m.group(1), head).strip()
        return ToolBlock("unverified", heading, body, position), end
    if head.startswith("Unattributed text"):
        return ToolBlock("unattributed", "", body, position), end
    relation = _RELATION.fullmatch(head)
    if relation is not None:
        description, evidence = _split_evidence(body)
        return ToolBlock("relation", relation.group(1), description, position, evidence=evidence), end
    entity = _ENTITY.fullmatch(head)
    if entity is not None:
        name = entity.group(2) or ""
        heading = f"{name} ({entity.group(1)})" if entity.group(1) else name
        return ToolBlock("entity", heading, body, position), end
    return ToolBlock("text", head, body, position), end


def _validated(href: str, sources: Mapping[str, Evidence]) -> Evidence | None:
    state, handle = classify_href(href)
    if state != "candidate" or handle is None:
        return None
    return sources.get(handle)


def _split_evidence(body: str) -> tuple[str, tuple[int, ...]]:
    description, _, last = body.rpartition("\n")
    listed = _EVIDENCE_LINE.fullmatch(last)
    if listed is not None:
        return description, tuple(int(p) for p in _POSITION.findall(listed.group(1)))
    if _EVIDENCE_NONE.fullmatch(last):
        return description, ()
    return body, ()
