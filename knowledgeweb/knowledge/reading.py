"""Reading evidence from one tool message (docs/contract.md#reading-evidence).

``read_sources`` is the reader's whole trust decision. It never raises: a
record that fails any rule is dropped, and the rest of the message still counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from knowledgeweb.knowledge.bounds import (
    MAX_EXCERPT,
    MAX_LOCATOR,
    MAX_PAGES,
    MAX_RECORDS,
    MAX_TITLE,
    NATIVE_ID_RE,
    NATIVE_TOOLS,
    NATIVE_VERSION,
    PROVIDER_RE,
    SHARED_ID_RE,
    SHARED_VERSION,
    TRUNCATION_MARK,
    is_http_url,
    is_page,
    is_text,
    is_version,
)
from knowledgeweb.knowledge.citations import contains_handle, handles_in
from knowledgeweb.knowledge.ids import native_handle, shared_handle, source_id
from knowledgeweb.knowledge.types import Evidence

SHARED_REQUIRED = frozenset({"id", "provider", "title", "excerpt"})
SHARED_KEYS = SHARED_REQUIRED | {"dataset_name", "url", "page"}
NATIVE_KEYS = frozenset(
    {
        "id",
        "provider",
        "dataset_id",
        "document_id",
        "chunk_id",
        "dataset_name",
        "document_name",
        "text",
        "truncated",
        "pages",
    }
)


def read_sources(name: str | None, content: object, artifact: object) -> dict[str, Evidence]:
    """The valid sources of one tool message, keyed by handle (``knowledge-source-<id>`` or
    ``knowledge-<id>-<N>``), in the order they appear.

    Shared records are read from ``knowledge_sources`` (a list) or, in the
    coexistence form, ``retrieval_sources``, in both cases only beside
    ``knowledge_sources_version: 1``. A native snapshot (``knowledge_sources``
    as ``{"version": 1, "sources": [...]}``) is read only from tools named
    ``knowledge_search`` or ``task``. A list of more than 100 records is
    rejected whole. When an id repeats, the first record wins.

    An optional field written as ``null`` is read as absent, which is also how
    the id treats it; the JSON Schema is stricter, because our producers leave
    absent fields out. Leniency here cannot admit forged evidence: the id still
    has to match every field.
    """
    if not isinstance(artifact, dict) or not isinstance(content, str):
        return {}
    found: dict[str, Evidence] = {}
    ks = artifact.get("knowledge_sources")
    if isinstance(ks, dict) and isinstance(name, str) and name in NATIVE_TOOLS:
        _collect(found, _native_records(ks), _native_evidence, content)
    if is_version(artifact.get("knowledge_sources_version"), SHARED_VERSION):
        for key in ("knowledge_sources", "retrieval_sources"):
            records = artifact.get(key)
            if isinstance(records, list) and len(records) <= MAX_RECORDS:
                _collect(found, records, _shared_evidence, content)
    return found


def read_signed_sources(name: str | None, artifact: object) -> dict[str, Evidence]:
    """The sources of a tool message whose evidence this server signed (``threads.receipts``).

    Every rule of ``read_sources`` holds except one: the handle and the excerpt need not
    appear in the content. The receipt proves the server returned these records with a
    content that held them; clients rewrite the content (text blocks, random ids), so the
    evidence is read from the records alone. ``name`` is the tool the server ran (from the
    receipt), not the name an import gives the message.
    """
    if not isinstance(artifact, dict):
        return {}
    found: dict[str, Evidence] = {}
    ks = artifact.get("knowledge_sources")
    if isinstance(ks, dict) and isinstance(name, str) and name in NATIVE_TOOLS:
        _collect(found, _native_records(ks), _native_evidence, None)
    if is_version(artifact.get("knowledge_sources_version"), SHARED_VERSION):
        for key in ("knowledge_sources", "retrieval_sources"):
            records = artifact.get(key)
            if isinstance(records, list) and len(records) <= MAX_RECORDS:
                _collect(found, records, _shared_evidence, None)
    return found


def claimed_handles(content: object, artifact: object) -> list[str]:
    """Every handle a tool message claims, valid or not: linked in its content, or named by a
    record's id in its evidence keys. What an import strips is told by these (``evidence_unsigned``)."""
    found = handles_in(content) if isinstance(content, str) else []
    if isinstance(artifact, dict):
        ks = artifact.get("knowledge_sources")
        native = ks.get("sources") if isinstance(ks, dict) else None
        for record in native if isinstance(native, list) else []:
            record_id = record.get("id") if isinstance(record, dict) else None
            if isinstance(record_id, str) and NATIVE_ID_RE.fullmatch(record_id):
                found.append(native_handle(record_id))
        for key in ("knowledge_sources", "retrieval_sources"):
            records = artifact.get(key)
            for record in records if isinstance(records, list) else []:
                record_id = record.get("id") if isinstance(record, dict) else None
                if isinstance(record_id, str) and SHARED_ID_RE.fullmatch(record_id):
                    found.append(shared_handle(record_id))
    return list(dict.fromkeys(found))


def _in_content(content: str | None, handle: str, text: str) -> bool:
    """Whether the content shows the handle and the text; ``None``: signed, not checked here."""
    return content is None or (contains_handle(content, handle) and text in content)


def _collect(found: dict[str, Evidence], records: list[Any], build: Any, content: str | None) -> None:
    for record in records:
        evidence = build(record, content) if isinstance(record, dict) else None
        if evidence is not None and evidence.handle not in found:
            found[evidence.handle] = evidence


def _native_records(snapshot: Mapping[str, Any]) -> list[Any]:
    if set(snapshot) != {"version", "sources"} or not is_version(snapshot["version"], NATIVE_VERSION):
        return []
    sources = snapshot["sources"]
    if not isinstance(sources, list) or len(sources) > MAX_RECORDS:
        return []
    return sources


def _optional_text(record: Mapping[str, Any], key: str, max_length: int) -> tuple[bool, str | None]:
    """(ok, value) for an optional text field; a missing key or ``null`` is absent."""
    value = record.get(key)
    if value is None:
        return True, None
    return is_text(value, max_length), value


def _shared_evidence(record: Mapping[str, Any], content: str | None) -> Evidence | None:
    keys = set(record)
    if not keys >= SHARED_REQUIRED or not keys <= SHARED_KEYS:
        return None
    record_id, provider = record["id"], record["provider"]
    title, excerpt = record["title"], record["excerpt"]
    if not (isinstance(record_id, str) and SHARED_ID_RE.fullmatch(record_id)):
        return None
    if not (isinstance(provider, str) and PROVIDER_RE.fullmatch(provider)):
        return None
    if not (is_text(title, MAX_TITLE) and is_text(excerpt, MAX_EXCERPT)):
        return None
    ok_dataset, dataset_name = _optional_text(record, "dataset_name", MAX_TITLE)
    url = record.get("url")
    page = record.get("page")
    if not ok_dataset:
        return None
    if url is not None and not (isinstance(url, str) and is_http_url(url)):
        return None
    if page is not None and not is_page(page):
        return None
    if source_id(provider, title, excerpt, dataset_name, url, page) != record_id:
        return None
    handle = shared_handle(record_id)
    if not _in_content(content, handle, excerpt):
        return None
    return Evidence(
        handle=handle,
        form="shared",
        id=record_id,
        provider=provider,
        title=title,
        excerpt=excerpt,
        dataset_name=dataset_name,
        url=url,
        pages=(page,) if page is not None else (),
        truncated=excerpt.endswith(TRUNCATION_MARK),
    )


def _native_evidence(record: Mapping[str, Any], content: str | None) -> Evidence | None:
    if set(record) != NATIVE_KEYS:
        return None
    record_id, text, pages = record["id"], record["text"], record["pages"]
    if not (isinstance(record_id, str) and NATIVE_ID_RE.fullmatch(record_id)):
        return None
    if record["provider"] != "ragflow" or type(record["truncated"]) is not bool:
        return None
    locators = {key: record[key] for key in ("dataset_id", "document_id", "chunk_id")}
    if not all(is_text(value, MAX_LOCATOR) for value in locators.values()):
        return None
    if not (is_text(record["dataset_name"], MAX_TITLE) and is_text(record["document_name"], MAX_TITLE)):
        return None
    if not is_text(text, MAX_EXCERPT):
        return None
    if not isinstance(pages, list) or len(pages) > MAX_PAGES or not all(is_page(p) for p in pages):
        return None
    handle = native_handle(record_id)
    if not _in_content(content, handle, text):
        return None
    return Evidence(
        handle=handle,
        form="native",
        id=record_id,
        provider="ragflow",
        title=record["document_name"],
        excerpt=text,
        dataset_name=record["dataset_name"],
        url=None,
        pages=tuple(pages),
        truncated=record["truncated"],
        locators=locators,
    )
