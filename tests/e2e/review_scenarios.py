"""Threads for the reviewer's browser tests: real text, real retrieval, labels that lie.

The Gettysburg Address comes from the sample corpus (a public-domain text), is
ingested into the local index as paragraphs and searched through the retrieval
service, so its evidence is exactly what a reader's own search would carry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth.models import User

from knowledgeweb.bindings.services import binding_create
from knowledgeweb.knowledge import RetrievalHit, source_id
from knowledgeweb.library.models import Chunk, Collection
from knowledgeweb.library.passages import passage_path
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest
from knowledgeweb.retrieval import retrieval_search
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.services import message_append, thread_create
from tests.e2e.scenarios import retrieve

CORPUS = Path(__file__).resolve().parents[2] / "sample_corpus" / "documents"
_HANDLE = re.compile(r"\(#(knowledge-source-[a-f0-9]{32})\)")


def gettysburg_paragraphs() -> list[str]:
    """The speech's paragraphs (after the front matter and heading), as in the corpus file."""
    text = (CORPUS / "gettysburg-address.md").read_text().split("---", 2)[2]
    return [p.strip() for p in text.split("\n\n") if p.strip() and not p.startswith("#")]


def binding_name(owner: User, collection: str) -> str:
    return f"local-{owner.username}-{collection.lower().replace(' ', '-')}"


def speeches(owner: User, name: str = "Speeches") -> Collection:
    """A collection holding the speech, one chunk per paragraph, served to ``owner`` alone."""
    collection = collection_get_or_create(name=name)
    document_ingest(
        collection=collection,
        source_key="gettysburg-address.md",
        content_hash="gettysburg",
        title="The Gettysburg Address",
        source_url="https://en.wikisource.org/wiki/Gettysburg_Address",
        chunks=[ChunkDraft(p) for p in gettysburg_paragraphs()],
    )
    binding_create(
        name=binding_name(owner, name),
        provider="local",
        tools=["knowledge_search"],
        users=[owner],
        scope="selected",
        selection=[{"dataset_id": str(collection.pk), "document_ids": []}],
    )
    return collection


@dataclass(frozen=True)
class Review:
    thread: Thread
    speech: str  # the handle of the cited paragraph of the speech
    other: str  # the handle of a second, unrelated source
    #: The excerpt sentence the first claim shares words with.
    closest: str


def review_thread(owner: User) -> Review:
    """Two answers: the first cites the speech under a label that names another source, with a
    claim that shares words with one of its sentences; the second cites it again (a backlink),
    cites a second source with a claim sharing no word with it, and holds an unresolved
    and a malformed citation."""
    speeches(owner)
    thread = thread_create(owner=owner, title="What Lincoln said")
    message_append(thread=thread, type="human", content="What did Lincoln say about the civil war?")
    outcome = retrieval_search(
        user=owner,
        tool="knowledge_search",
        query="great civil war battle-field",
        thread_id=thread.id,
        binding_name=binding_name(owner, "Speeches"),
    )
    speech = _HANDLE.findall(outcome.content)[0]
    _, (other,) = retrieve(
        thread,
        RetrievalHit(
            text="Mercury is the smallest planet.\nIts orbit takes 88 days.",
            title="Planets primer",
            dataset_name="Astronomy",
            url='https://example.org/planets?x=1&y="2"',
        ),
    )
    closest = "We are met on a great battle-field of that war."
    message_append(
        thread=thread,
        type="ai",
        content=(
            "Lincoln said that they had met on a battle-field of that war. "
            f"[citation:NASA Earth Fact Sheet, 2024](#{speech})"
        ),
    )
    message_append(thread=thread, type="human", content="Anything else?")
    message_append(
        thread=thread,
        type="ai",
        content=(
            f"He spoke at the cemetery [Gettysburg](#{speech}). "
            f"Quarterly tax filings rose sharply [citation:2](#{other.handle}). "
            f"A guess [citation:Made up](#knowledge-source-{'0' * 32}). "
            "A broken one [citation:Bad](#knowledge-source-nothex)."
        ),
    )
    return Review(thread, speech, other.handle, closest)


def summaries_thread(owner: User, *, empty_query: str = "zebra crossings") -> Thread:
    """A search whose hits the output budget cuts (some of 8 shown) and one that finds nothing."""
    collection = collection_get_or_create(name="Tides")
    for n in range(8):
        document_ingest(
            collection=collection,
            source_key=f"tides-{n}.txt",
            content_hash=f"tides-{n}",
            title=f"Tide tables {n}",
            source_url="",
            chunks=[ChunkDraft(f"Tide note {n}. " + "The water rises and falls twice a day. " * 10)],
        )
    binding_create(name="local-tides", provider="local", tools=["knowledge_search"], users=[owner])
    thread = thread_create(owner=owner, title="Budgets")
    message_append(thread=thread, type="human", content="Tell me about tides.")
    for query, limit in (("tide water", 1500), (empty_query, 16000)):
        outcome = retrieval_search(
            user=owner, tool="knowledge_search", query=query, thread_id=thread.id, output_limit=limit
        )
        assert outcome.status == "success", outcome.content
    return thread


def speech_passage_path(name: str = "Speeches") -> str:
    """The "Open in document" page of the cited paragraph (the one about the battle-field)."""
    chunk = Chunk.objects.get(document__collection__name=name, text__contains="battle-field")
    return passage_path(collection_name=name, excerpt=chunk.text)


@dataclass(frozen=True)
class Problems:
    """``review_thread`` with two more answers: one citing a source retrieved only after it, and
    one citing nothing. Its problems in page order: a label naming another source, no source,
    malformed, evidence only later (no source), no citations."""

    review: Review
    later: str  # the handle retrieved only after the answer that cites it


def problems_thread(owner: User) -> Problems:
    review = review_thread(owner)
    thread = review.thread
    title, text, dataset = "Moon facts", "The Moon orbits the Earth in about 27 days.", "Astronomy"
    hit = RetrievalHit(text=text, title=title, dataset_name=dataset)
    later = f"knowledge-source-{source_id('local', title, text, dataset)}"
    message_append(thread=thread, type="human", content="And the Moon?")
    message_append(thread=thread, type="ai", content=f"It orbits in about 27 days [Moon facts](#{later}).")
    retrieve(thread, hit)
    message_append(thread=thread, type="human", content="Sum it up?")
    message_append(
        thread=thread, type="ai", content="Lincoln spoke at Gettysburg; the Moon orbits the Earth."
    )
    return Problems(review, later)
