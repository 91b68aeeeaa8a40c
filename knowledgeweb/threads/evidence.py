"""The one place that validates tool messages into evidence (docs/contract.md#reading-evidence).

A tool message is validated once, when it is written, and its evidence stored
with its render (``MessageRender.sources``). Validation is also memoized in
Django's cache, keyed by the message id, its digest and the renderer's version
(``threads.rendering.version``; the golden corpus covers the reader), for the walks that re-render
stale messages; entries expire after ``KNOWLEDGEWEB_CACHE_TTL`` and are deleted
with their message.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, Literal
from uuid import UUID

from knowledgeweb.counters import Counter
from knowledgeweb.knowledge import Citation, Evidence, read_sources
from knowledgeweb.knowledge.citations import malformed_reason
from knowledgeweb.memo import memo_get_many, memo_set_many
from knowledgeweb.threads.models import Message, MessageType
from knowledgeweb.threads.rendering import version

ResolvedState = Literal["resolved", "unresolved", "malformed"]

REASON_MALFORMED = "The link looks like a knowledge citation but is not in an accepted form."
REASON_UNRESOLVED = "No tool message before this answer in the thread holds evidence for this source."


#: Validations actually run (cache misses); tests and benchmarks read it.
validation_counter = Counter()


@dataclass(frozen=True, slots=True)
class ResolvedCitation:
    """A citation with its verdict. ``source`` is set only when ``state`` is resolved."""

    label: str
    href: str
    state: ResolvedState
    source: Evidence | None
    reason: str
    #: Set by the citation report from the stored render (``knowledge.passages.label_mismatch``).
    label_mismatch: bool = False
    #: The source's number in the thread (the report's, from ``Thread.source_numbers``).
    number: int | None = None


def evidence_cache_key(message: Message) -> str:
    """The key of a message's memoized validation; the namespace changes with the renderer's version."""
    return f"knowledgeweb:evidence:r{version.RENDERER_VERSION}:{message.id}:{message.digest}"


def evidence_to_json(source: Evidence) -> dict[str, Any]:
    """Evidence as stored with a render (JSON)."""
    return {
        "handle": source.handle,
        "form": source.form,
        "id": source.id,
        "provider": source.provider,
        "title": source.title,
        "excerpt": source.excerpt,
        "dataset_name": source.dataset_name,
        "url": source.url,
        "pages": list(source.pages),
        "truncated": source.truncated,
        "locators": dict(source.locators),
    }


def evidence_from_json(record: Mapping[str, Any]) -> Evidence:
    """Evidence back from a render. Written only by the renderer from a validation, so trusted."""
    return Evidence(
        handle=record["handle"],
        form=record["form"],
        id=record["id"],
        provider=record["provider"],
        title=record["title"],
        excerpt=record["excerpt"],
        dataset_name=record.get("dataset_name"),
        url=record.get("url"),
        pages=tuple(record.get("pages", ())),
        truncated=bool(record.get("truncated", False)),
        locators=dict(record.get("locators", {})),
    )


def message_sources(message: Message) -> dict[str, Evidence]:
    """The valid sources of one message, keyed by handle; empty for anything but a tool message."""
    return messages_sources([message]).get(message.id, {})


def messages_sources(messages: Sequence[Message]) -> dict[UUID, dict[str, Evidence]]:
    """The valid sources of every tool message in ``messages``, keyed by message id.

    One ``get_many`` fetches every memoized validation, so a warm thread costs one
    cache round trip however long it is; the misses are validated and written back
    with one ``set_many``.
    """
    keys = {evidence_cache_key(m): m for m in messages if m.type == MessageType.TOOL}
    if not keys:
        return {}
    cached = memo_get_many(keys)
    _load_deferred_artifacts([m for key, m in keys.items() if not isinstance(cached.get(key), dict)])
    found: dict[UUID, dict[str, Evidence]] = {}
    fresh: dict[str, dict[str, Evidence]] = {}
    for key, message in keys.items():
        sources = cached.get(key)
        if not isinstance(sources, dict):
            sources = read_sources(message.name, message.content, message.artifact)
            validation_counter.increment()
            fresh[key] = sources
        found[message.id] = sources
    # Messages never change, so neither does what they prove.
    memo_set_many(fresh)
    return found


def _load_deferred_artifacts(messages: Sequence[Message]) -> None:
    """Load, in one query, the artifacts of ``messages`` that were fetched without them."""
    deferred = {m.pk: m for m in messages if "artifact" in m.get_deferred_fields()}
    if not deferred:
        return
    for pk, artifact in Message.objects.filter(pk__in=list(deferred)).values_list("pk", "artifact"):
        deferred[pk].artifact = artifact


class EvidencePrefix(Mapping[str, Evidence]):
    """The first ``size`` handles of a walk's growing evidence, as a read-only mapping.

    Handles are only ever appended, so every earlier message's view is a prefix
    of the same dict: the walk hands out O(1) views instead of copying the
    evidence each time a tool message adds to it.
    """

    __slots__ = ("_entries", "_size")

    def __init__(self, entries: dict[str, tuple[int, Evidence]], size: int) -> None:
        self._entries = entries
        self._size = size

    def __getitem__(self, handle: str) -> Evidence:
        position, source = self._entries[handle]
        if position >= self._size:
            raise KeyError(handle)
        return source

    def __iter__(self) -> Iterator[str]:
        return islice(self._entries, self._size)

    def __len__(self) -> int:
        return self._size


def evidence_before(
    messages: Sequence[Message], *, sources: Mapping[UUID, dict[str, Evidence]] | None = None
) -> Iterator[tuple[Message, Mapping[str, Evidence]]]:
    """Yield each message with the evidence of the tool messages before it.

    The first source to claim a handle keeps it; a later one never replaces it.
    The mapping yielded is read-only and stays valid after the walk moves on.
    ``sources`` is ``messages_sources(messages)`` when the caller already has it.
    """
    if sources is None:
        sources = messages_sources(messages)
    entries: dict[str, tuple[int, Evidence]] = {}
    for message in messages:
        yield message, EvidencePrefix(entries, len(entries))
        for handle, source in sources.get(message.id, {}).items():
            if handle not in entries:
                entries[handle] = (len(entries), source)


def resolve_citation(citation: Citation, available: Mapping[str, Evidence]) -> ResolvedCitation:
    """Resolve one citation against the evidence available before its message."""
    if citation.state == "malformed" or citation.handle is None:
        return ResolvedCitation(
            citation.label, citation.href, "malformed", None, malformed_reason(citation.href)
        )
    source = available.get(citation.handle)
    if source is None:
        return ResolvedCitation(citation.label, citation.href, "unresolved", None, REASON_UNRESOLVED)
    return ResolvedCitation(citation.label, citation.href, "resolved", source, "")
