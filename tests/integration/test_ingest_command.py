"""``manage.py ingest``: idempotent re-ingest, bad files reported and skipped, progress, summary."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from knowledgeweb.library.models import Chunk, Collection, Document
from tests.pdf_writer import pdf_bytes

pytestmark = pytest.mark.django_db


def _ingest(*paths: Path | str, collection: str = "docs") -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("ingest", *map(str, paths), collection=collection, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _ingest_failing(*paths: Path | str, collection: str = "docs") -> tuple[str, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("ingest", *map(str, paths), collection=collection, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue(), str(caught.value)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    (tmp_path / "notes.md").write_text("# Notes\n\nFirst paragraph.\n\nSecond paragraph.\n", encoding="utf-8")
    (tmp_path / "plain.txt").write_text("Plain title\n\nSome plain text.\n", encoding="utf-8")
    (tmp_path / "page.html").write_text("<title>Page</title><p>Hello page.</p>", encoding="utf-8")
    (tmp_path / "book.pdf").write_bytes(pdf_bytes([["Page one."], ["Page two."]], title="Book"))
    return tmp_path


def test_it_ingests_every_supported_file_in_a_directory(corpus: Path) -> None:
    out, _ = _ingest(corpus)

    assert sorted(Document.objects.values_list("title", flat=True)) == [
        "Book",
        "Notes",
        "Page",
        "Plain title",
    ]
    assert Collection.objects.get().name == "docs"
    assert "4 created, 0 updated, 0 unchanged, 0 skipped" in out


def test_re_ingesting_the_same_files_changes_nothing(corpus: Path) -> None:
    _ingest(corpus)
    before = list(Chunk.objects.order_by("id").values_list("id", "text", "page"))
    documents = list(Document.objects.order_by("id").values_list("id", "title", "content_hash"))

    out, _ = _ingest(corpus)

    assert list(Chunk.objects.order_by("id").values_list("id", "text", "page")) == before
    assert list(Document.objects.order_by("id").values_list("id", "title", "content_hash")) == documents
    assert "0 created, 0 updated, 4 unchanged" in out


def test_re_ingesting_a_changed_file_updates_it_in_place(corpus: Path) -> None:
    _ingest(corpus)
    notes = Document.objects.get(title="Notes")

    (corpus / "notes.md").write_text("# Notes, revised\n\nOnly this now.\n", encoding="utf-8")
    out, _ = _ingest(corpus / "notes.md")

    assert Document.objects.count() == 4
    notes.refresh_from_db()
    assert notes.title == "Notes, revised"
    assert list(notes.chunks.values_list("text", flat=True)) == ["# Notes, revised\n\nOnly this now."]
    assert "1 updated" in out


def test_the_same_file_in_another_collection_is_another_document(corpus: Path) -> None:
    _ingest(corpus / "notes.md", collection="one")
    _ingest(corpus / "notes.md", collection="two")

    assert Document.objects.filter(title="Notes").count() == 2


def test_a_corrupt_pdf_an_empty_file_and_a_binary_file_are_skipped_and_the_rest_ingested(
    corpus: Path,
) -> None:
    (corpus / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog")
    (corpus / "empty.md").write_text("", encoding="utf-8")
    (corpus / "blob.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))

    out, err, error = _ingest_failing(corpus)

    assert "Skipped" in err
    assert f"Skipped {corpus / 'broken.pdf'}: the PDF cannot be read" in err
    assert f"Skipped {corpus / 'empty.md'}: the file is empty" in err
    assert f"Skipped {corpus / 'blob.txt'}: the file looks binary" in err
    assert error == "3 file(s) were skipped; the others were ingested."
    assert "4 created, 0 updated, 0 unchanged, 3 skipped" in out
    assert sorted(Document.objects.values_list("title", flat=True)) == [
        "Book",
        "Notes",
        "Page",
        "Plain title",
    ]
    assert not Document.objects.filter(source_key__contains="broken").exists()


def test_a_file_that_breaks_after_ingest_is_skipped_and_its_indexed_copy_is_kept(corpus: Path) -> None:
    from knowledgeweb.library.selectors import chunk_search

    _ingest(corpus)
    before = list(Chunk.objects.order_by("id").values_list("id", "document__title", "text", "page"))
    (corpus / "book.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog")
    (corpus / "notes.md").write_text("", encoding="utf-8")

    out, err, error = _ingest_failing(corpus)

    assert f"Skipped {corpus / 'book.pdf'}: the PDF cannot be read" in err
    assert f"Skipped {corpus / 'notes.md'}: the file is empty" in err
    assert error == "2 file(s) were skipped; the others were ingested."
    assert "0 created, 0 updated, 2 unchanged, 2 skipped" in out
    assert list(Chunk.objects.order_by("id").values_list("id", "document__title", "text", "page")) == before
    assert [(hit.title, hit.page) for hit in chunk_search(query="two", limit=5)] == [("Book", 2)]


def test_an_unreadable_file_is_reported_and_skipped(corpus: Path) -> None:
    os.symlink(corpus / "missing-target.md", corpus / "dangling.md")

    _, err, _ = _ingest_failing(corpus)

    assert f"Skipped {corpus / 'dangling.md'}: a broken or looping symbolic link" in err
    assert Document.objects.count() == 4


def test_text_that_is_not_utf8_is_reported_and_skipped(corpus: Path) -> None:
    (corpus / "latin1.txt").write_bytes("Caf\xe9 cr\xe8me".encode("latin-1"))

    _, err, _ = _ingest_failing(corpus)

    assert f"Skipped {corpus / 'latin1.txt'}: the file is not UTF-8 text (bad byte at offset 3)" in err
    assert Document.objects.count() == 4


def test_a_pdf_without_text_is_reported_and_skipped(tmp_path: Path) -> None:
    (tmp_path / "blank.pdf").write_bytes(pdf_bytes([[], []]))

    _, err, _ = _ingest_failing(tmp_path)

    assert "blank.pdf: the file has no text to index" in err
    assert Document.objects.count() == 0
    assert Chunk.objects.count() == 0


def test_a_missing_path_and_an_unsupported_named_file_are_reported(corpus: Path) -> None:
    (corpus / "image.png").write_bytes(b"\x89PNG")

    _, err, error = _ingest_failing(corpus / "nope.md", corpus / "image.png", corpus / "notes.md")

    assert f"Skipped {corpus / 'nope.md'}: no such file or directory" in err
    assert f"Skipped {corpus / 'image.png'}: unsupported file type" in err
    assert error == "2 file(s) were skipped; the others were ingested."
    assert list(Document.objects.values_list("title", flat=True)) == ["Notes"]


def test_unsupported_and_hidden_files_in_a_directory_are_ignored_not_failed(corpus: Path) -> None:
    (corpus / "image.png").write_bytes(b"\x89PNG")
    (corpus / ".hidden.md").write_text("# Hidden\n\nSecret.\n", encoding="utf-8")
    (corpus / ".git").mkdir()
    (corpus / ".git" / "HEAD.txt").write_text("ref\n", encoding="utf-8")

    out, _ = _ingest(corpus)

    assert f"ignored   {corpus / 'image.png'} (unsupported type)" in out
    assert "1 ignored (unsupported type)" in out
    assert Document.objects.count() == 4


def test_a_progress_bar_goes_to_stderr(corpus: Path) -> None:
    out, err = _ingest(corpus)

    progress = [line for line in err.splitlines() if line.startswith("[")]
    assert len(progress) == 4
    assert progress[-1].startswith("[" + "#" * 30 + "] 4/4 ")
    assert not any(line.startswith("[") for line in out.splitlines())


def test_a_run_in_which_every_file_is_skipped_creates_no_collection(tmp_path: Path) -> None:
    (tmp_path / "empty.md").write_text("", encoding="utf-8")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog")

    out, err, error = _ingest_failing(tmp_path, tmp_path / "missing.txt", collection="new")

    assert f"Skipped {tmp_path / 'empty.md'}: the file is empty" in err
    assert error == "3 file(s) were skipped; the others were ingested."
    assert "Collection 'new': 0 created, 0 updated, 0 unchanged, 3 skipped" in out
    assert Collection.objects.count() == 0


def test_a_database_failure_on_a_new_collections_first_file_leaves_no_collection(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.db import DataError

    from knowledgeweb.library.services import documents, ingest

    real = documents.document_ingest
    calls: list[str] = []

    def fails_first(**kwargs: object) -> documents.DocumentIngestResult:
        calls.append(str(kwargs["title"]))
        if len(calls) == 1:
            raise DataError("value too long")
        return real(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ingest, "document_ingest", fails_first)

    _, err, _ = _ingest_failing(corpus / "notes.md", corpus / "plain.txt", collection="fresh")

    assert "notes.md: the document could not be stored (DataError: value too long)" in err
    assert list(Collection.objects.values_list("name", flat=True)) == ["fresh"]
    assert list(Document.objects.values_list("title", "collection__name")) == [("Plain title", "fresh")]


def test_a_run_that_only_fails_on_a_new_collection_rolls_the_collection_back(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.db import DataError

    from knowledgeweb.library.services import documents, ingest

    def always_fails(**kwargs: object) -> documents.DocumentIngestResult:
        raise DataError("value too long")

    monkeypatch.setattr(ingest, "document_ingest", always_fails)

    _, err, _ = _ingest_failing(corpus / "notes.md", collection="fresh")

    assert "notes.md: the document could not be stored (DataError: value too long)" in err
    assert Collection.objects.count() == 0


def test_a_blank_collection_name_is_refused_and_nothing_is_written(corpus: Path) -> None:
    _, _, error = _ingest_failing(corpus, collection="   ")

    assert error == "--collection must name a collection."
    assert Collection.objects.count() == 0
    assert Document.objects.count() == 0


def test_a_too_long_collection_name_is_refused_and_nothing_is_written(corpus: Path) -> None:
    _, _, error = _ingest_failing(corpus, collection="x" * 201)

    assert error.startswith("Invalid collection name: Ensure this value has at most 200 characters")
    assert Collection.objects.count() == 0
    assert Document.objects.count() == 0


def test_re_ingest_keys_are_relative_to_the_working_directory(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(corpus)

    _ingest("notes.md")
    _ingest(corpus / "notes.md")

    assert list(Document.objects.values_list("source_key", flat=True)) == ["notes.md"]


def test_a_nul_byte_late_in_a_text_file_is_reported_and_skipped(corpus: Path) -> None:
    (corpus / "late-nul.txt").write_bytes(b"Plain text. " * 1000 + b"\x00tail")

    _, err, _ = _ingest_failing(corpus)

    assert (
        f"Skipped {corpus / 'late-nul.txt'}: the file looks binary (it contains NUL bytes), not text" in err
    )
    assert Document.objects.count() == 4


def test_a_database_failure_for_one_file_is_reported_and_the_others_are_ingested(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.db import DataError

    from knowledgeweb.library.services import documents, ingest

    real = documents.document_ingest

    def fails_for_notes(**kwargs: object) -> documents.DocumentIngestResult:
        if kwargs["title"] == "Notes":
            raise DataError("value too long")
        return real(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ingest, "document_ingest", fails_for_notes)

    _, err, _ = _ingest_failing(corpus)

    assert (
        f"Skipped {corpus / 'notes.md'}: the document could not be stored (DataError: value too long)" in err
    )
    assert sorted(Document.objects.values_list("title", flat=True)) == ["Book", "Page", "Plain title"]
