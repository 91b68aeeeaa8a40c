"""Ingest files from disk: find them, extract them, store them, report each outcome."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import DatabaseError, transaction

from knowledgeweb.library.extraction import ExtractedDocument, ExtractionError, extract, is_supported
from knowledgeweb.library.models import Collection
from knowledgeweb.library.selectors import collection_by_name
from knowledgeweb.library.services.collections import collection_get_or_create, collection_name_validate
from knowledgeweb.library.services.documents import (
    DocumentIngestResult,
    IngestAction,
    chunk_drafts,
    document_ingest,
)

#: Larger files are reported and skipped rather than read into memory.
MAX_FILE_BYTES = 50 * 1024 * 1024


class IngestError(Exception):
    """One file could not be ingested; the message says why."""


@dataclass(frozen=True, slots=True)
class FileOutcome:
    path: str
    result: DocumentIngestResult | None = None
    problem: str = ""


@dataclass
class IngestReport:
    collection_name: str
    outcomes: list[FileOutcome] = field(default_factory=list)
    # Unsupported files met while walking a directory: noted, not failures.
    ignored: list[str] = field(default_factory=list)

    def count(self, action: IngestAction) -> int:
        return sum(1 for o in self.outcomes if o.result is not None and o.result.action == action)

    @property
    def problems(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.problem]

    def summary(self) -> str:
        chunks = sum(o.result.chunk_count for o in self.outcomes if o.result is not None)
        return (
            f"Collection {self.collection_name!r}: {self.count(IngestAction.CREATED)} created, "
            f"{self.count(IngestAction.UPDATED)} updated, {self.count(IngestAction.UNCHANGED)} unchanged, "
            f"{len(self.problems)} skipped, {len(self.ignored)} ignored (unsupported type); "
            f"{chunks} chunks in the files ingested."
        )


def source_key(path: Path, *, key_root: Path) -> str:
    """The re-ingest key: the path relative to ``key_root`` when inside it, else absolute."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(key_root.resolve()).as_posix()
    except ValueError:
        return resolved.as_posix()


def discover_files(paths: Iterable[Path]) -> tuple[list[Path], list[FileOutcome], list[str]]:
    """Files to ingest, paths that cannot be, and unsupported files found in directories.

    Directories are walked in name order; hidden files and directories are left out.
    """
    found: list[Path] = []
    problems: list[FileOutcome] = []
    ignored: list[str] = []
    for path in paths:
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    candidate = Path(root) / name
                    if name.startswith("."):
                        continue
                    if is_supported(candidate):
                        found.append(candidate)
                    else:
                        ignored.append(str(candidate))
        elif not path.exists() and not path.is_symlink():
            problems.append(FileOutcome(str(path), problem="no such file or directory"))
        elif not is_supported(path):
            problems.append(FileOutcome(str(path), problem="unsupported file type"))
        else:
            found.append(path)
    return found, problems, ignored


def file_ingest(*, collection: Collection, path: Path, key: str) -> DocumentIngestResult:
    """Read, extract and store one file. Raises ``IngestError`` and writes nothing on failure."""
    data, extracted = file_extract(path=path)
    return extracted_store(collection=collection, key=key, data=data, extracted=extracted)


def file_extract(*, path: Path) -> tuple[bytes, ExtractedDocument]:
    """The bytes of ``path`` and what they hold. Raises ``IngestError``; touches no database."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise IngestError(f"the file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        data = path.read_bytes()
    except OSError as exc:
        raise IngestError(f"the file cannot be read ({exc.strerror or exc})") from exc
    try:
        extracted = extract(path, data)
    except ExtractionError as exc:
        raise IngestError(str(exc)) from exc
    return data, extracted


def extracted_store(
    *, collection: Collection, key: str, data: bytes, extracted: ExtractedDocument
) -> DocumentIngestResult:
    """Store an extracted file under ``key``. Raises ``IngestError`` and writes nothing on failure."""
    try:
        return document_ingest(
            collection=collection,
            source_key=key,
            content_hash=hashlib.sha256(data).hexdigest(),
            title=extracted.title,
            source_url=extracted.source_url,
            chunks=chunk_drafts(extracted),
        )
    except ValidationError as exc:
        raise IngestError(f"the document is invalid ({'; '.join(exc.messages)})") from exc
    except DatabaseError as exc:
        # The file's own transaction was rolled back; the other files go on.
        raise IngestError(f"the document could not be stored ({type(exc).__name__}: {exc})") from exc


def paths_ingest(
    *,
    collection_name: str,
    paths: Sequence[Path],
    key_root: Path,
    on_file: Callable[[int, int, Path], None] | None = None,
) -> IngestReport:
    """Ingest every supported file under ``paths``; each file commits or fails on its own.

    A new collection is created with its first stored file, so a run in which every
    file is skipped leaves nothing behind. A bad name raises ``ValidationError`` first.
    """
    name = collection_name.strip()
    collection = collection_by_name(name=name)
    if collection is None:
        collection_name_validate(name=name)
    files, problems, ignored = discover_files(paths)
    report = IngestReport(collection_name=name, outcomes=list(problems), ignored=ignored)
    for index, path in enumerate(files, start=1):
        if on_file is not None:
            on_file(index, len(files), path)
        try:
            data, extracted = file_extract(path=path)
            # A new collection commits with its first document, or not at all.
            with transaction.atomic():
                target = collection or collection_get_or_create(name=name)
                result = extracted_store(
                    collection=target, key=source_key(path, key_root=key_root), data=data, extracted=extracted
                )
            collection = target
        except IngestError as exc:
            report.outcomes.append(FileOutcome(str(path), problem=str(exc)))
        else:
            report.outcomes.append(FileOutcome(str(path), result=result))
    return report
