"""Forwarding evidence through a delegated report (docs/contract.md#delegation-and-accumulation).

A ``task`` tool whose child ran retrievals returns the child's report. Only
sources whose handles the report actually cites are forwarded, each with its
evidence written into a bounded appendix so the forwarded records validate
under the ordinary reader rules (handle and exact excerpt in the content).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from knowledgeweb.knowledge.bounds import MAX_RECORDS, SHARED_VERSION
from knowledgeweb.knowledge.citations import USER_CONTENT_PREFIX, contains_handle
from knowledgeweb.knowledge.types import Evidence

APPENDIX_HEADING = "\n\n---\nEvidence cited above:"


def forward_sources(
    report: str,
    sources: Iterable[Evidence],
    *,
    max_sources: int = MAX_RECORDS,
    max_appendix_chars: int = 8000,
) -> tuple[str, dict[str, Any]]:
    """Return ``(content, artifact)`` for a delegated report.

    Sources are taken in the given order; the first with a handle wins. A cited
    source whose evidence block would push the appendix past
    ``max_appendix_chars`` (or past ``max_sources``) is not forwarded, so its
    citation stays unresolved rather than pointing at absent evidence. Native
    records stay in ``knowledge_sources``; shared ones go there too unless
    native ones are present, in which case they sit in ``retrieval_sources``.
    """
    cap = max(0, min(max_sources, MAX_RECORDS))
    blocks: list[str] = []
    native: list[dict[str, Any]] = []
    shared: list[dict[str, Any]] = []
    seen: set[str] = set()
    used = len(APPENDIX_HEADING)
    for source in sources:
        if source.handle in seen or not _cites(report, source.handle):
            continue
        if len(native) + len(shared) >= cap:
            break
        block = _evidence_block(source)
        if used + len(block) + 2 > max_appendix_chars:
            continue
        seen.add(source.handle)
        used += len(block) + 2
        blocks.append(block)
        (native if source.form == "native" else shared).append(_record(source))

    content = report if not blocks else report + APPENDIX_HEADING + "\n\n" + "\n\n".join(blocks)
    artifact: dict[str, Any] = {}
    if native:
        artifact["knowledge_sources"] = {"version": 1, "sources": native}
        if shared:
            artifact["knowledge_sources_version"] = SHARED_VERSION
            artifact["retrieval_sources"] = shared
    elif shared:
        artifact["knowledge_sources_version"] = SHARED_VERSION
        artifact["knowledge_sources"] = shared
    return content, artifact


def _cites(report: str, handle: str) -> bool:
    # docs/contract.md#reading-evidence accepts the sanitizer's ``#user-content-`` form as the same citation.
    return contains_handle(report, handle) or contains_handle(report, USER_CONTENT_PREFIX + handle)


def _evidence_block(source: Evidence) -> str:
    label = " ".join(source.title.replace("[", "(").replace("]", ")").split())
    return f"[citation:{label}](#{source.handle})\n{source.excerpt}"


def _record(source: Evidence) -> dict[str, Any]:
    if source.form == "native":
        return {
            "id": source.id,
            "provider": "ragflow",
            **source.locators,
            "dataset_name": source.dataset_name,
            "document_name": source.title,
            "text": source.excerpt,
            "truncated": source.truncated,
            "pages": list(source.pages),
        }
    record: dict[str, Any] = {
        "id": source.id,
        "provider": source.provider,
        "title": source.title,
        "excerpt": source.excerpt,
    }
    if source.dataset_name is not None:
        record["dataset_name"] = source.dataset_name
    if source.url is not None:
        record["url"] = source.url
    if source.page is not None:
        record["page"] = source.page
    return record
