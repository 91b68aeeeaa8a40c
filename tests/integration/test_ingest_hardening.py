"""``manage.py ingest`` reads only regular files inside the given roots, and never more than its cap.

Real files, real symbolic links, a real FIFO and a real Unix socket: each refused one
is reported with a clear message and nothing of it reaches the index.
"""

from __future__ import annotations

import io
import os
import socket
import threading
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from knowledgeweb.library.models import Chunk, Collection, Document
from knowledgeweb.library.services import IngestError
from knowledgeweb.library.services import ingest as ingest_module
from knowledgeweb.library.services.ingest import file_check, file_extract, file_read_bounded

pytestmark = pytest.mark.django_db

SECRET = "SECRET_KEY=django-insecure-must-never-be-indexed"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """``corpus/`` holds one good file; ``private/`` beside it holds a secrets file."""
    corpus, private = tmp_path / "corpus", tmp_path / "private"
    corpus.mkdir()
    private.mkdir()
    (corpus / "notes.md").write_text("# Notes\n\nOwls hunt at night.\n", encoding="utf-8")
    (private / "secrets.md").write_text(f"# Secrets\n\n{SECRET}\n", encoding="utf-8")
    return corpus, private


def run(*paths: Path) -> tuple[str, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("ingest", *map(str, paths), collection="docs", stdout=out, stderr=err)
    except CommandError as exc:
        return out.getvalue(), err.getvalue(), str(exc)
    return out.getvalue(), err.getvalue(), ""


def run_in_thread(*paths: Path, timeout: float) -> tuple[str, str, str]:
    """Run the command in a thread, so a blocking open fails the test instead of hanging it."""
    outcome: list[tuple[str, str, str]] = []

    def work() -> None:
        try:
            outcome.append(run(*paths))
        finally:
            connection.close()

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(timeout)
    assert not worker.is_alive(), "ingest blocked"
    return outcome[0]


def indexed_titles() -> list[str]:
    return sorted(Document.objects.values_list("title", flat=True))


def assert_secret_not_indexed() -> None:
    assert not Chunk.objects.filter(text__contains="django-insecure").exists()
    assert not Document.objects.filter(title="Secrets").exists()


def test_a_link_to_a_file_outside_the_root_is_reported_and_not_indexed(layout: tuple[Path, Path]) -> None:
    corpus, private = layout
    (corpus / "leak.md").symlink_to(private / "secrets.md")
    _, err, error = run(corpus)
    assert (
        f"Skipped {corpus / 'leak.md'}: a symbolic link to {(private / 'secrets.md').resolve()}, outside the "
        f"folder being ingested ({corpus.resolve()}); links are followed only within it"
    ) in err
    assert error == "1 file(s) were skipped; the others were ingested."
    assert indexed_titles() == ["Notes"]
    assert_secret_not_indexed()


def test_a_relative_link_climbing_out_of_the_root_is_refused(layout: tuple[Path, Path]) -> None:
    corpus, _ = layout
    nested = corpus / "deep"
    nested.mkdir()
    (nested / "up.md").symlink_to(Path("..") / ".." / "private" / "secrets.md")
    _, err, _ = run(corpus)
    assert f"Skipped {nested / 'up.md'}: a symbolic link to" in err
    assert "outside the folder being ingested" in err
    assert_secret_not_indexed()


def test_a_named_file_that_links_outside_its_folder_is_refused(layout: tuple[Path, Path]) -> None:
    corpus, private = layout
    (corpus / "leak.md").symlink_to(private / "secrets.md")
    _, err, error = run(corpus / "leak.md")
    assert "outside the folder being ingested" in err
    assert error
    assert Document.objects.count() == 0
    assert not Collection.objects.exists()


def test_a_link_to_dev_zero_is_refused_without_reading(layout: tuple[Path, Path]) -> None:
    corpus, _ = layout
    (corpus / "zero.txt").symlink_to("/dev/zero")
    _, err, _ = run(corpus)
    assert f"Skipped {corpus / 'zero.txt'}: a symbolic link to /dev/zero, outside the folder" in err
    assert indexed_titles() == ["Notes"]


def test_a_device_is_refused_before_it_is_opened() -> None:
    # Even inside its root (here /dev itself), a device is never a file to read.
    with pytest.raises(
        IngestError, match=r"^a character device, not a regular file; only regular files are read$"
    ):
        file_check(Path("/dev/zero"), root=Path("/dev"))
    # And reading refuses it after opening, from fstat, without reading a byte.
    with pytest.raises(IngestError, match="a character device, not a regular file"):
        file_read_bounded(Path("/dev/zero"), max_bytes=1024)


# The command runs in another thread, on its own connection: only a transactional test sees its writes.
@pytest.mark.django_db(transaction=True)
def test_a_fifo_is_reported_without_blocking_and_not_indexed(layout: tuple[Path, Path]) -> None:
    corpus, _ = layout
    os.mkfifo(corpus / "pipe.md")
    (corpus / "pipe-link.md").symlink_to(corpus / "pipe.md")
    os.mkfifo(corpus / "pipe.bin")  # an unsupported name is no excuse to open it
    _, err, error = run_in_thread(corpus, timeout=20)
    assert (
        f"Skipped {corpus / 'pipe.md'}: a named pipe (FIFO), not a regular file; only regular files are read"
        in err
    )
    assert (
        f"Skipped {corpus / 'pipe-link.md'}: a symbolic link to a named pipe (FIFO), not a regular file"
        in err
    )
    assert f"Skipped {corpus / 'pipe.bin'}: a named pipe (FIFO)" in err
    assert error == "3 file(s) were skipped; the others were ingested."
    assert indexed_titles() == ["Notes"]


def test_a_fifo_swapped_in_after_the_check_is_opened_without_blocking_and_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    # file_read_bounded opens with O_NONBLOCK, so even a FIFO that got past a check cannot block.
    with pytest.raises(IngestError, match="a named pipe"):
        file_read_bounded(tmp_path / "pipe.md")


def test_a_unix_socket_is_reported_and_not_indexed(
    layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus, _ = layout
    monkeypatch.chdir(corpus)  # a short relative name: socket paths are limited to ~100 bytes
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind("listener.md")
        server.listen(1)
        _, err, error = run(corpus)
    finally:
        server.close()
    assert (
        f"Skipped {corpus / 'listener.md'}: a socket, not a regular file; only regular files are read" in err
    )
    assert error == "1 file(s) were skipped; the others were ingested."
    assert indexed_titles() == ["Notes"]


def test_a_linked_directory_is_not_walked(layout: tuple[Path, Path]) -> None:
    corpus, private = layout
    (corpus / "private-link").symlink_to(private, target_is_directory=True)
    (corpus / "sub").mkdir()
    (corpus / "sub" / "inner.md").write_text("# Inner\n\nInside the root.\n", encoding="utf-8")
    (corpus / "sub-link").symlink_to(corpus / "sub", target_is_directory=True)
    _, err, _ = run(corpus)
    for name in ("private-link", "sub-link"):
        assert (
            f"Skipped {corpus / name}: a symbolic link to a directory; linked directories are not walked "
            "(ingest the directory itself)"
        ) in err
    # The real directory is walked once, under its own name.
    assert indexed_titles() == ["Inner", "Notes"]
    assert_secret_not_indexed()


def test_a_link_inside_the_root_to_a_file_inside_the_root_is_followed(layout: tuple[Path, Path]) -> None:
    corpus, _ = layout
    (corpus / "alias.md").symlink_to("notes.md")
    out, err, error = run(corpus)
    assert error == ""
    assert "Skipped" not in err
    # The link and its target are one file: one document, keyed by the real path.
    assert indexed_titles() == ["Notes"]
    assert "1 created, 0 updated, 1 unchanged, 0 skipped" in out


def test_a_broken_and_a_looping_link_are_reported(layout: tuple[Path, Path]) -> None:
    corpus, _ = layout
    (corpus / "gone.md").symlink_to(corpus / "missing.md")
    (corpus / "loop-a.md").symlink_to(corpus / "loop-b.md")
    (corpus / "loop-b.md").symlink_to(corpus / "loop-a.md")
    _, err, _ = run(corpus)
    for name in ("gone.md", "loop-a.md", "loop-b.md"):
        assert f"Skipped {corpus / name}: a broken or looping symbolic link" in err
    assert indexed_titles() == ["Notes"]


def test_reads_stop_at_the_cap_plus_one_byte(
    layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus, _ = layout
    monkeypatch.setattr(ingest_module, "MAX_FILE_BYTES", 1000)
    (corpus / "at-cap.txt").write_bytes(b"A" * 1000)
    (corpus / "over-cap.txt").write_bytes(b"B" * 1001)
    _, err, _ = run(corpus)
    assert f"Skipped {corpus / 'over-cap.txt'}: the file is larger than 1000 bytes" in err
    keys = sorted(Path(key).name for key in Document.objects.values_list("source_key", flat=True))
    assert keys == ["at-cap.txt", "notes.md"]
    assert not Chunk.objects.filter(text__contains="BBBB").exists()


def test_the_cap_counts_bytes_read_not_the_size_stat_reports() -> None:
    # /proc files report a size of 0 and hold more: a stat-based cap would read them whole.
    status = Path("/proc/self/status")
    assert status.stat().st_size == 0
    with pytest.raises(IngestError, match="the file is larger than 16 bytes"):
        file_read_bounded(status, max_bytes=16)


def test_a_file_replaced_after_its_check_is_not_read(tmp_path: Path) -> None:
    first, second = tmp_path / "a.md", tmp_path / "b.md"
    first.write_text("# A\n\nOne.\n", encoding="utf-8")
    second.write_text("# B\n\nTwo.\n", encoding="utf-8")
    _, checked = file_check(first, root=tmp_path)
    with pytest.raises(IngestError, match="replaced while it was being checked"):
        file_read_bounded(second, expected=checked)


def test_extracting_a_single_file_keeps_links_within_its_folder(layout: tuple[Path, Path]) -> None:
    corpus, private = layout
    (corpus / "leak.md").symlink_to(private / "secrets.md")
    with pytest.raises(IngestError, match="outside the folder being ingested"):
        file_extract(path=corpus / "leak.md")
    data, extracted = file_extract(path=corpus / "notes.md")
    assert extracted.title == "Notes"
    assert data.startswith(b"# Notes")
