"""Ingest files from disk: find them, extract them, store them, report each outcome."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
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

#: Larger files are reported and skipped: reading stops at this many bytes plus one.
MAX_FILE_BYTES = 50 * 1024 * 1024
_READ_SIZE = 1024 * 1024

LINKED_DIRECTORY = (
    "a symbolic link to a directory; linked directories are not walked (ingest the directory itself)"
)


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


@dataclass(frozen=True, slots=True)
class FoundFile:
    """A file to ingest and the root it was found under (a given folder, or a given file's folder)."""

    path: Path
    root: Path


def discover_files(paths: Iterable[Path]) -> tuple[list[FoundFile], list[FileOutcome], list[str]]:
    """Files to ingest, paths that cannot be, and unsupported files found in directories.

    Directories are walked in name order; hidden files and directories are left out.
    Only ``lstat`` is used here: nothing is opened, so a FIFO cannot block the walk.
    A named pipe, socket or device is reported; so is a linked directory (never walked:
    docs/decisions/0003-ingest-reads-only-regular-files.md). Linked files are checked when they are read.
    """
    found: list[FoundFile] = []
    problems: list[FileOutcome] = []
    ignored: list[str] = []
    for path in paths:
        if path.is_dir():
            root = path.resolve()
            for current, dirs, files in os.walk(path):
                for name in sorted(d for d in dirs if not d.startswith(".")):
                    candidate = Path(current) / name
                    if candidate.is_symlink():
                        problems.append(FileOutcome(str(candidate), problem=LINKED_DIRECTORY))
                dirs[:] = sorted(
                    d for d in dirs if not d.startswith(".") and not (Path(current) / d).is_symlink()
                )
                for name in sorted(files):
                    if not name.startswith("."):
                        _classify(Path(current) / name, root, found, problems, ignored)
        elif not path.exists() and not path.is_symlink():
            problems.append(FileOutcome(str(path), problem="no such file or directory"))
        else:
            before = len(ignored)
            _classify(path, path.absolute().parent.resolve(), found, problems, ignored)
            if len(ignored) > before:
                # A file named on the command line is a mistake to report, not a file to note.
                ignored.pop()
                problems.append(FileOutcome(str(path), problem="unsupported file type"))
    return found, problems, ignored


def _classify(
    path: Path, root: Path, found: list[FoundFile], problems: list[FileOutcome], ignored: list[str]
) -> None:
    try:
        mode = path.lstat().st_mode
    except OSError as exc:
        problems.append(FileOutcome(str(path), problem=f"the file cannot be read ({exc.strerror or exc})"))
        return
    if not stat.S_ISREG(mode) and not stat.S_ISLNK(mode):
        problems.append(FileOutcome(str(path), problem=not_regular(mode)))
    elif is_supported(path):
        found.append(FoundFile(path, root))
    else:
        ignored.append(str(path))


def not_regular(mode: int) -> str:
    """Why a file of this type is never read."""
    kinds = [
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a directory"),
    ]
    kind = next((label for test, label in kinds if test(mode)), "not a regular file")
    return f"{kind}, not a regular file; only regular files are read"


def file_check(path: Path, *, root: Path) -> tuple[Path, os.stat_result]:
    """The regular file ``path`` names, resolved, with its ``stat``; raise ``IngestError`` otherwise.

    A symbolic link is followed only when its target lies inside ``root`` (itself resolved).
    Nothing is opened.
    """
    try:
        link = path.lstat()
        target = path.resolve(strict=True)
        info = os.stat(target) if stat.S_ISLNK(link.st_mode) else link
    except (OSError, RuntimeError) as exc:
        if path.is_symlink():
            raise IngestError("a broken or looping symbolic link") from exc
        raise IngestError(f"the file cannot be read ({getattr(exc, 'strerror', None) or exc})") from exc
    if not target.is_relative_to(root):
        what = "a symbolic link" if stat.S_ISLNK(link.st_mode) else "a path"
        raise IngestError(
            f"{what} to {target}, outside the folder being ingested ({root}); "
            "links are followed only within it"
        )
    if not stat.S_ISREG(info.st_mode):
        prefix = "a symbolic link to " if stat.S_ISLNK(link.st_mode) else ""
        raise IngestError(prefix + not_regular(info.st_mode))
    return target, info


def file_read_bounded(
    path: Path, *, expected: os.stat_result | None = None, max_bytes: int | None = None
) -> bytes:
    """At most ``max_bytes`` of the regular file at ``path``; ``IngestError`` past that or for anything else.

    Bounded by the bytes actually read (``stat`` sizes lie: ``/proc`` files say 0, a file
    may grow). Opened with ``O_NONBLOCK`` and ``O_NOFOLLOW``, then checked with ``fstat``:
    a FIFO or link swapped in after ``file_check`` is refused without blocking.
    """
    limit = MAX_FILE_BYTES if max_bytes is None else max_bytes
    flags = (
        os.O_RDONLY
        | getattr(os, "O_NONBLOCK", 0)
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_CLOEXEC", 0)
    )
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise IngestError(f"the file cannot be read ({exc.strerror or exc})") from exc
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise IngestError(not_regular(opened.st_mode))
        if expected is not None and (opened.st_dev, opened.st_ino) != (expected.st_dev, expected.st_ino):
            raise IngestError("the file was replaced while it was being checked; it was not read")
        parts: list[bytes] = []
        total = 0
        while True:
            part = os.read(fd, min(_READ_SIZE, limit + 1 - total))
            if not part:
                return b"".join(parts)
            parts.append(part)
            total += len(part)
            if total > limit:
                raise IngestError(f"the file is larger than {_size(limit)}")
    except OSError as exc:
        raise IngestError(f"the file cannot be read ({exc.strerror or exc})") from exc
    finally:
        os.close(fd)


def _size(limit: int) -> str:
    mib = 1024 * 1024
    return f"{limit // mib} MiB" if limit % mib == 0 else f"{limit} bytes"


def file_ingest(
    *, collection: Collection, path: Path, key: str, root: Path | None = None
) -> DocumentIngestResult:
    """Read, extract and store one file. Raises ``IngestError`` and writes nothing on failure."""
    data, extracted = file_extract(path=path, root=root)
    return extracted_store(collection=collection, key=key, data=data, extracted=extracted)


def file_extract(
    *, path: Path, root: Path | None = None, max_bytes: int | None = None
) -> tuple[bytes, ExtractedDocument]:
    """The bytes of ``path`` and what they hold. Raises ``IngestError``; touches no database.

    ``root`` bounds where a symbolic link may lead; by default the folder holding ``path``.
    """
    target, info = file_check(path, root=root if root is not None else path.absolute().parent.resolve())
    data = file_read_bounded(target, expected=info, max_bytes=max_bytes)
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
    for index, file in enumerate(files, start=1):
        path = file.path
        if on_file is not None:
            on_file(index, len(files), path)
        try:
            data, extracted = file_extract(path=path, root=file.root)
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


@dataclass(frozen=True, slots=True)
class ReadFile:
    """One file read from disk for a job: its bytes and re-ingest key, or why it was not read."""

    path: str
    key: str = ""
    data: bytes = b""
    problem: str = ""


def paths_read(
    *,
    paths: Sequence[Path],
    key_root: Path,
    on_file: Callable[[int, int, Path], None] | None = None,
) -> tuple[Iterator[ReadFile], list[str]]:
    """Every file under ``paths`` read with ingest's rules (types, size cap, links, hidden
    files), keyed as ``paths_ingest`` keys it; and the unsupported files walked past.

    Touches no database: the machine running ``manage.py ingest`` reads, a worker stores.
    Files that cannot be read come first (as ``paths_ingest`` reports them), then the rest
    in walk order. The files are read one at a time as the iterator is consumed, so a
    large folder is never held in memory at once.
    """
    files, problems, ignored = discover_files(paths)

    def read() -> Iterator[ReadFile]:
        for outcome in problems:
            yield ReadFile(outcome.path, problem=outcome.problem)
        for index, file in enumerate(files, start=1):
            if on_file is not None:
                on_file(index, len(files), file.path)
            try:
                target, info = file_check(file.path, root=file.root)
                data = file_read_bounded(target, expected=info)
            except IngestError as exc:
                yield ReadFile(str(file.path), problem=str(exc))
            else:
                # Keyed once read: a looping link has no key to compute.
                yield ReadFile(str(file.path), key=source_key(file.path, key_root=key_root), data=data)

    return read(), ignored
