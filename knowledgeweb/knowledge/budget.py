"""The global tool-output budget (docs/contract.md#formatting-and-budgets).

When content is over the limit it is cut (at a line boundary when one is
available) and a notice says so. Evidence then follows the text: a record is
kept only while its handle and its exact excerpt are still in the content, and
a citation link whose evidence is gone becomes its plain label (links are found
by ``linkgrammar``, the grammar the viewer renders with). Records are
dropped, never edited, so no excerpt is ever shortened under an existing id,
and a native snapshot stays a native snapshot.
"""

from __future__ import annotations

from typing import Any

from knowledgeweb.knowledge.citations import contains_handle
from knowledgeweb.knowledge.ids import native_handle, shared_handle
from knowledgeweb.knowledge.linkgrammar import unlink_citations


def enforce_output_budget(content: str, artifact: object, limit: int) -> tuple[str, dict[str, Any] | None]:
    """Return ``(content, artifact)`` with ``len(content) <= limit``.

    Content within the limit comes back unchanged. A non-dict artifact comes
    back as ``None``; every unrelated artifact key is preserved.
    """
    kept: dict[str, Any] | None = dict(artifact) if isinstance(artifact, dict) else None
    if len(content) <= limit:
        return content, kept
    notice = f"\n\n[Output truncated to fit the tool output budget of {limit} characters.]"
    budget = limit - len(notice)
    if budget <= 0:
        return notice.strip()[: max(limit, 0)], _prune(kept, "")
    cut = content[:budget]
    line_end = cut.rfind("\n")
    if line_end > 0:
        cut = cut[:line_end]
    cut = cut.rstrip()
    # Unlinking a label can only shorten the text, but it may touch an excerpt that
    # contains a link, so prune and unlink until nothing changes.
    while True:
        kept = _prune(kept, cut)
        unlinked = _unlink_orphans(cut, _handles(kept))
        if unlinked == cut:
            break
        cut = unlinked
    return cut + notice, kept


def _present(content: str, handle: str, text: object) -> bool:
    return isinstance(text, str) and bool(text) and contains_handle(content, handle) and text in content


def _prune(artifact: dict[str, Any] | None, content: str) -> dict[str, Any] | None:
    if artifact is None:
        return None
    pruned = dict(artifact)
    ks = pruned.get("knowledge_sources")
    if isinstance(ks, dict) and isinstance(ks.get("sources"), list):
        sources = [
            record
            for record in ks["sources"]
            if isinstance(record, dict)
            and isinstance(record.get("id"), str)
            and _present(content, native_handle(record["id"]), record.get("text"))
        ]
        pruned["knowledge_sources"] = {**ks, "sources": sources}
    for key in ("knowledge_sources", "retrieval_sources"):
        records = pruned.get(key)
        if isinstance(records, list):
            pruned[key] = [
                record
                for record in records
                if isinstance(record, dict)
                and isinstance(record.get("id"), str)
                and _present(content, shared_handle(record["id"]), record.get("excerpt"))
            ]
    return pruned


def _handles(artifact: dict[str, Any] | None) -> set[str]:
    if artifact is None:
        return set()
    handles: set[str] = set()
    ks = artifact.get("knowledge_sources")
    if isinstance(ks, dict):
        handles.update(native_handle(r["id"]) for r in ks.get("sources", []) if isinstance(r, dict))
    for key in ("knowledge_sources", "retrieval_sources"):
        records = artifact.get(key)
        if isinstance(records, list):
            handles.update(shared_handle(r["id"]) for r in records if isinstance(r, dict))
    return handles


def _unlink_orphans(content: str, handles: set[str]) -> str:
    # The one link grammar finds the links, so the budget unlinks exactly what a reader sees as one.
    return unlink_citations(content, keep=handles.__contains__)
