"""The dataset out of a queue: one row per judged citation and per judged answer.

Each citation row pairs the claim sentence with the exact evidence it cites (the source as
validated when the answer was written) and every reviewer's latest verdict and note; the
final verdict is the lead's (``adjudicated``), else the one more than half of the counted
verdicts give (``majority``; "can't tell" not counted), else none. Rows are produced a
chunk of threads at a time, so memory follows the chunk, not the queue (``bench/review_export.py``).
The row's shape is ``contracts/review_dataset_row.v1.json``; CSV flattens it and escapes
cells a spreadsheet would run as a formula.
"""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from django.contrib.auth.models import User

from knowledgeweb.knowledge.linkgrammar import parse_markdown
from knowledgeweb.review.items import Item, ItemKey, Judgement, counted_values, threads_items
from knowledgeweb.review.models import FinalVerdict, ItemKind, ReviewQueue
from knowledgeweb.review.queue_errors import ExportFormatInvalid
from knowledgeweb.review.queueing import queue_threads
from knowledgeweb.threads.models import Message, MessageRender, MessageType, Thread
from knowledgeweb.threads.rendering.claims import citation_claims

FORMATS = ("jsonl", "csv")
CONTENT_TYPES = {"jsonl": "application/x-ndjson; charset=utf-8", "csv": "text/csv; charset=utf-8"}

#: The CSV columns, in order: the row's fields flattened (verdicts as a JSON cell).
CSV_COLUMNS = [
    "kind",
    "queue_id",
    "queue_name",
    "thread_id",
    "thread_title",
    "agent_name",
    "message_id",
    "message_seq",
    "position",
    "question",
    "claim",
    "label",
    "href",
    "answer",
    "source_provider",
    "source_title",
    "source_dataset",
    "source_url",
    "source_page",
    "source_excerpt",
    "source_id",
    "verdicts",
    "final_value",
    "final_origin",
    "final_note",
    "first_judged_at",
    "last_judged_at",
]

#: What a spreadsheet reads as the start of a formula (OWASP's CSV injection list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def export_format(value: str) -> str:
    if value not in FORMATS:
        raise ExportFormatInvalid(f"Unknown export format {value!r}; allowed: {', '.join(FORMATS)}.")
    return value


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def final_of(judgements: dict[int, Judgement], adjudicated: FinalVerdict | None) -> dict[str, Any]:
    """The item's final verdict: the lead's, else a strict majority of counted verdicts, else none."""
    if adjudicated is not None:
        return {
            "value": adjudicated.value,
            "origin": "adjudicated",
            "note": adjudicated.note,
            "at": _time(adjudicated.created_at),
        }
    values = counted_values(judgements)
    if values:
        value, count = Counter(values).most_common(1)[0]
        if count * 2 > len(values):
            return {"value": value, "origin": "majority", "note": "", "at": None}
    return {"value": None, "origin": "none", "note": "", "at": None}


def _source(record: dict[str, Any] | None) -> dict[str, Any] | None:
    if record is None:
        return None
    pages = record.get("pages") or []
    return {
        "provider": record["provider"],
        "title": record["title"],
        "dataset": record.get("dataset_name"),
        "url": record.get("url"),
        "page": pages[0] if pages else None,
        "excerpt": record["excerpt"],
        "id": record["id"],
    }


#: Threads read together: a few queries per chunk, and memory bounded by the chunk, not the queue.
CHUNK_THREADS = 50


@dataclass
class _Chunk:
    """What the rows of a chunk of threads need, read in one query each."""

    questions: dict[UUID, str | None] = field(default_factory=dict)
    contents: dict[UUID, str] = field(default_factory=dict)
    sources: dict[UUID, dict[str, dict[str, Any]]] = field(default_factory=lambda: defaultdict(dict))
    finals: dict[ItemKey, FinalVerdict] = field(default_factory=dict)


def _chunk(queue: ReviewQueue, thread_ids: list[UUID]) -> _Chunk:
    chunk = _Chunk()
    messages = Message.objects.filter(
        thread_id__in=thread_ids, type__in=[MessageType.HUMAN, MessageType.AI]
    ).order_by("thread_id", "seq")
    last: dict[UUID, str | None] = {}
    for thread_id, message_id, kind, content in messages.values_list("thread_id", "id", "type", "content"):
        if kind == MessageType.HUMAN:
            last[thread_id] = content
        else:
            chunk.questions[message_id], chunk.contents[message_id] = last.get(thread_id), content
    renders = MessageRender.objects.filter(thread_id__in=thread_ids, message__type=MessageType.TOOL)
    for thread_id, records in renders.order_by("thread_id", "seq").values_list("thread_id", "sources"):
        for record in records:
            chunk.sources[thread_id].setdefault(record["handle"], record)
    finals = FinalVerdict.objects.filter(queue=queue, thread_id__in=thread_ids).order_by("created_at", "id")
    chunk.finals = {ItemKey(f.message_id, f.kind, f.position): f for f in finals}
    return chunk


def chunk_rows(
    queue: ReviewQueue, threads: list[Thread], usernames: dict[int, str]
) -> Iterator[dict[str, Any]]:
    """The rows of these threads of ``queue``, thread by thread, each in its page order."""
    judged = threads_items([t.id for t in threads])
    wanted = [t.id for t in threads if judged[t.id].verdicts]
    if not wanted:
        return
    chunk = _chunk(queue, wanted)
    for thread in threads:
        items = judged[thread.id]
        seqs = {item.key.message_id: item.seq for item in items.items}
        claims: dict[UUID, list[str]] = {}
        for item in items.items:
            judgements = items.judged_by(item.key)
            if not judgements:
                continue
            message_id = item.key.message_id
            if item.key.kind == ItemKind.CITATION and message_id not in claims:
                claims[message_id] = citation_claims(parse_markdown(chunk.contents.get(message_id, "")))
            yield _row(
                queue,
                thread,
                item,
                judgements,
                chunk.finals.get(item.key),
                usernames,
                chunk.questions,
                chunk.contents,
                claims,
                chunk.sources[thread.id],
                seqs,
            )


def _row(
    queue: ReviewQueue,
    thread: Thread,
    item: Item,
    judgements: dict[int, Judgement],
    adjudicated: FinalVerdict | None,
    usernames: dict[int, str],
    questions: dict[UUID, str | None],
    contents: dict[UUID, str],
    claims: dict[UUID, list[str]],
    sources: dict[str, dict[str, Any]],
    seqs: dict[UUID, int],
) -> dict[str, Any]:
    key = item.key
    citation = key.kind == ItemKind.CITATION
    found_claims = claims.get(key.message_id, [])
    times = [j.created_at for j in judgements.values()]
    return {
        "kind": key.kind,
        "queue": {"id": queue.pk, "name": queue.name},
        "thread": {"id": str(thread.id), "title": thread.title, "agent_name": thread.agent_name},
        "message": {"id": str(key.message_id), "seq": seqs[key.message_id]},
        "position": key.position,
        "question": questions.get(key.message_id),
        "claim": (found_claims[key.position - 1] if key.position <= len(found_claims) else None)
        if citation
        else None,
        "label": item.label if citation else None,
        "href": item.href if citation else None,
        "answer": None if citation else contents.get(key.message_id, ""),
        "source": _source(sources.get(item.handle or "")) if citation else None,
        "verdicts": [
            {
                "reviewer": usernames.get(j.reviewer_id, str(j.reviewer_id)),
                "value": j.value,
                "note": j.note,
                "at": _time(j.created_at),
            }
            for j in sorted(judgements.values(), key=lambda j: (j.created_at, j.reviewer_id))
        ],
        "final": final_of(judgements, adjudicated),
        "first_judged_at": _time(min(times)),
        "last_judged_at": _time(max(times)),
    }


def queue_rows(queue: ReviewQueue) -> Iterator[dict[str, Any]]:
    """Every row of the queue, thread by thread (threads read in chunks, never all at once)."""
    usernames = dict(
        User.objects.filter(verdicts__thread__in=queue_threads(queue))
        .distinct()
        .values_list("pk", "username")
    )
    threads: list[Thread] = []
    for thread in queue_threads(queue).only("id", "title", "agent_name").iterator(chunk_size=CHUNK_THREADS):
        threads.append(thread)
        if len(threads) == CHUNK_THREADS:
            yield from chunk_rows(queue, threads, usernames)
            threads = []
    if threads:
        yield from chunk_rows(queue, threads, usernames)


def escape_cell(value: object) -> str:
    """A CSV cell a spreadsheet shows as text: a leading formula character is quoted away."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def flat_row(row: dict[str, Any]) -> list[str]:
    """A row as CSV cells, in ``CSV_COLUMNS`` order, each escaped."""
    source = row["source"] or {}
    flat: dict[str, object] = {
        "kind": row["kind"],
        "queue_id": row["queue"]["id"],
        "queue_name": row["queue"]["name"],
        "thread_id": row["thread"]["id"],
        "thread_title": row["thread"]["title"],
        "agent_name": row["thread"]["agent_name"],
        "message_id": row["message"]["id"],
        "message_seq": row["message"]["seq"],
        "position": row["position"],
        "question": row["question"],
        "claim": row["claim"],
        "label": row["label"],
        "href": row["href"],
        "answer": row["answer"],
        **{
            f"source_{name}": source.get(name)
            for name in ("provider", "title", "dataset", "url", "page", "excerpt", "id")
        },
        "verdicts": json.dumps(row["verdicts"], ensure_ascii=False),
        "final_value": row["final"]["value"],
        "final_origin": row["final"]["origin"],
        "final_note": row["final"]["note"],
        "first_judged_at": row["first_judged_at"],
        "last_judged_at": row["last_judged_at"],
    }
    return [escape_cell(flat[column]) for column in CSV_COLUMNS]


class _Line:
    """A file-like object csv.writer writes one line into, returned as text."""

    def write(self, value: str) -> str:
        return value


def export_lines(queue: ReviewQueue, format: str) -> Iterator[str]:
    """The export as text lines, produced as they are read (for a streamed response or a file)."""
    export_format(format)
    if format == "jsonl":
        for row in queue_rows(queue):
            yield json.dumps(row, ensure_ascii=False) + "\n"
        return
    writer = csv.writer(_Line())
    yield writer.writerow(CSV_COLUMNS)
    for row in queue_rows(queue):
        yield writer.writerow(flat_row(row))
