"""Test data for the contract core: contract-level builders and hypothesis strategies.

The builders compute ids from docs/contract.md#source-records directly (never through ``source_id``), so
the tests that use them check the implementation against the specification.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from hypothesis import strategies as st

from knowledgeweb.knowledge import RagflowLocator, RetrievalHit, RetrievalResult

SHARED_HANDLE = re.compile(r"#knowledge-source-([a-f0-9]{32})")
NATIVE_HANDLE = re.compile(r"#knowledge-([a-f0-9]{32}-[1-9][0-9]{0,2})")
NONCE = "0123456789abcdef0123456789abcdef"


def spec_id(
    provider: str,
    title: str,
    excerpt: str,
    dataset_name: str | None = None,
    url: str | None = None,
    page: int | None = None,
) -> str:
    """The docs/contract.md#source-records recipe, written out independently of the implementation."""
    payload = ["knowledgeweb.source.v1", provider, title, excerpt, dataset_name, url, page]
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(data).hexdigest()[:32]


def shared_record(
    *,
    provider: str = "lightrag",
    title: str = "docs/guide.md",
    excerpt: str = "Actual retrieved document text",
    dataset_name: str | None = None,
    url: str | None = None,
    page: int | None = None,
) -> dict[str, Any]:
    """A valid shared record; absent optional fields are omitted."""
    record: dict[str, Any] = {
        "id": spec_id(provider, title, excerpt, dataset_name, url, page),
        "provider": provider,
        "title": title,
        "excerpt": excerpt,
    }
    optional = {"dataset_name": dataset_name, "url": url, "page": page}
    record.update({key: value for key, value in optional.items() if value is not None})
    return record


def shared_content(records: list[dict[str, Any]]) -> str:
    """Tool content citing each record the way docs/contract.md#source-records writes it."""
    return "\n\n".join(
        f"[citation:{record['title']}](#knowledge-source-{record['id']})\n{record['excerpt']}"
        for record in records
    )


def shared_message(records: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """(content, artifact) of a tool message carrying ``records`` in the shared envelope."""
    return shared_content(records), {"knowledge_sources_version": 1, "knowledge_sources": records}


def native_record(position: int = 1, *, nonce: str = NONCE, **overrides: Any) -> dict[str, Any]:
    """A valid native RAGFlow record (docs/contract.md#native-ragflow-snapshots)."""
    record: dict[str, Any] = {
        "id": f"{nonce}-{position}",
        "provider": "ragflow",
        "dataset_id": f"ds-{position}",
        "document_id": f"doc-{position}",
        "chunk_id": f"chunk-{position}",
        "dataset_name": "Handbook",
        "document_name": f"Chapter {position}.pdf",
        "text": f"Native chunk text number {position}.",
        "truncated": False,
        "pages": [position],
    }
    record.update(overrides)
    return record


def native_content(records: list[dict[str, Any]]) -> str:
    return "\n\n".join(
        f"[citation:{index}](#knowledge-{record['id']}) {record['document_name']} "
        f"({record['dataset_name']})\n{record['text']}"
        for index, record in enumerate(records, start=1)
    )


def native_message(records: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """(content, artifact) of a tool message carrying ``records`` as a native snapshot."""
    return native_content(records), {"knowledge_sources": {"version": 1, "sources": records}}


def content_handles(content: str) -> set[str]:
    """Every citation handle written anywhere in ``content`` (without '#')."""
    shared = {f"knowledge-source-{found}" for found in SHARED_HANDLE.findall(content)}
    native = {f"knowledge-{found}" for found in NATIVE_HANDLE.findall(content)}
    return shared | native


def artifact_records(artifact: dict[str, Any] | None) -> list[tuple[str, str, dict[str, Any]]]:
    """(handle, excerpt, record) for every record in any of the reserved artifact forms."""
    if not artifact:
        return []
    found: list[tuple[str, str, dict[str, Any]]] = []
    for key in ("knowledge_sources", "retrieval_sources"):
        value = artifact.get(key)
        if isinstance(value, list):
            found += [(f"knowledge-source-{r['id']}", r["excerpt"], r) for r in value]
        elif isinstance(value, dict):
            found += [(f"knowledge-{r['id']}", r["text"], r) for r in value.get("sources", [])]
    return found


# --- hypothesis strategies ---------------------------------------------------------------

# Printable text from all of Unicode except surrogates, with markdown-significant
# characters made likely, so formatting is exercised on awkward input.
_alphabet = st.one_of(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"), exclude_characters="«»"),
    st.sampled_from(list("[]()#`*_\\<>!\n ")),
)
texts = st.text(_alphabet, min_size=0, max_size=240)
solid_texts = st.text(_alphabet, min_size=1, max_size=240).filter(lambda value: value.strip() != "")
titles = st.text(_alphabet, min_size=1, max_size=60).filter(lambda value: value.strip() != "")
names = st.text(st.characters(codec="ascii", categories=("L", "N")), min_size=1, max_size=20)
providers = st.from_regex(r"\A[a-z][a-z0-9_.-]{0,10}\Z")
urls = st.builds(lambda path: f"https://example.org/{path}", names)
pages = st.integers(min_value=1, max_value=1_000_000)

locators = st.builds(
    RagflowLocator,
    dataset_id=names,
    document_id=names,
    chunk_id=names,
    pages=st.lists(pages, max_size=3).map(tuple),
)


@st.composite
def document_hits(draw: st.DrawFn, *, with_locator: bool | None = None) -> RetrievalHit:
    """A document hit: titled (cited) or untitled (unattributed), sometimes with locators."""
    locator_wanted = draw(st.booleans()) if with_locator is None else with_locator
    return RetrievalHit(
        text=draw(solid_texts),
        kind="document",
        title=draw(titles) if locator_wanted else draw(st.none() | titles),
        dataset_name=draw(names) if locator_wanted else draw(st.none() | names),
        url=draw(st.none() | urls),
        page=draw(st.none() | pages),
        score=draw(st.none() | st.floats(0, 1)),
        locator=draw(locators) if locator_wanted else None,
    )


graph_hits = st.one_of(
    st.builds(
        RetrievalHit,
        text=solid_texts,
        kind=st.just("entity"),
        title=st.none() | names,
        entity_type=st.none() | names,
    ),
    st.builds(
        RetrievalHit,
        text=solid_texts,
        kind=st.just("relation"),
        source_entity=names,
        target_entity=names,
        evidence=st.lists(st.integers(1, 130), max_size=3).map(tuple),
    ),
)

any_hits = st.one_of(document_hits(), graph_hits)


@st.composite
def results(draw: st.DrawFn) -> RetrievalResult:
    """Any result: shared-form mixes, or all-locator RAGFlow results that go native."""
    native = draw(st.booleans())
    if native:
        hits = draw(st.lists(document_hits(with_locator=True), max_size=120))
        provider = "ragflow"
    else:
        hits = draw(st.lists(any_hits, max_size=120))
        provider = draw(st.sampled_from(["ragflow", "lightrag", "local"]) | providers)
    # Every hit text starts with a unique marker, so a test can tell which hits are shown.
    hits = [hit.model_copy(update={"text": f"{marker(i)} {hit.text}"}) for i, hit in enumerate(hits, 1)]
    if not native and hits and draw(st.booleans()):
        # A few blank hits, which format_result drops without counting them.
        for index in draw(st.sets(st.integers(0, len(hits) - 1), max_size=5)):
            hits[index] = hits[index].model_copy(update={"text": draw(st.sampled_from(["", " ", "\n\t "]))})
    return RetrievalResult(
        provider=provider,
        query=draw(texts),
        hits=tuple(hits),
        tool=draw(st.sampled_from(["knowledge_search", "lightrag_relations", "task"])),
    )


def marker(position: int) -> str:
    """The unique tag that opens hit number ``position`` in ``results()`` (at most 5 characters)."""
    return f"«{position}»"


budgets = st.fixed_dictionaries(
    {
        "max_chars_per_hit": st.integers(min_value=1, max_value=1_200),
        "max_total_chars": st.integers(min_value=0, max_value=12_000),
    }
)
# Per-hit limits long enough to keep a hit's marker even when its excerpt is shortened.
marked_budgets = st.fixed_dictionaries(
    {
        "max_chars_per_hit": st.integers(min_value=10, max_value=1_200),
        "max_total_chars": st.integers(min_value=0, max_value=12_000),
    }
)
