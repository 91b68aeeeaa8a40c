"""Uploading documents in the admin in a real browser: a PDF and a Markdown file become
searchable documents; each bad file is named with its problem and writes nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, FilePayload, Page, expect

from knowledgeweb.jobs.models import Job
from knowledgeweb.library.models import Chunk, Collection, Document
from knowledgeweb.library.selectors import chunk_search
from tests.e2e.test_admin_effective_access import admin_page
from tests.pdf_writer import pdf_bytes

pytestmark = pytest.mark.e2e

MARKDOWN = b"# Beekeeping\n\nSmoke calms the colony before the hive is opened.\n"
PDF = pdf_bytes([["Orchard pruning."], ["Cut above an outward-facing bud in late winter."]], title="Orchard")


def upload(page: Page, collection: Collection, *files: tuple[str, str, bytes]) -> None:
    page.goto("/admin/jobs/job/add/")
    page.locator("#id_collection").select_option(str(collection.pk))
    payloads: list[FilePayload] = [
        {"name": name, "mimeType": mime, "buffer": data} for name, mime, data in files
    ]
    page.locator("#id_documents").set_input_files(payloads)
    page.locator('input[type="submit"][value="Upload"]').click()


def test_an_admin_uploads_a_pdf_and_a_markdown_file_and_bad_files_are_named(
    live_server: Any, new_context: Callable[..., BrowserContext]
) -> None:
    collection = Collection.objects.create(name="Garden")
    page, errors = admin_page(live_server, new_context)

    upload(page, collection, ("bees.md", "text/markdown", MARKDOWN), ("orchard.pdf", "application/pdf", PDF))
    expect(page.locator(".messagelist")).to_contain_text("2 of 2 done")
    assert Document.objects.filter(collection=collection).count() == 2
    assert [h.title for h in chunk_search(query="smoke colony hive", limit=5)] == ["Beekeeping"]
    [pdf_hit] = chunk_search(query="outward bud winter", limit=5)
    assert (pdf_hit.title, pdf_hit.page) == ("Orchard", 2)
    before = (Document.objects.count(), Chunk.objects.count(), Job.objects.count())

    # Refused by the form: named, and nothing (not even a job) is written.
    upload(
        page,
        collection,
        ("notes.docx", "application/octet-stream", b"PK\x03\x04"),
        ("bees-copy.md", "text/markdown", MARKDOWN),
    )
    expect(page.locator(".errornote")).to_contain_text("Nothing was stored")
    expect(page.locator(".errorlist")).to_contain_text("notes.docx: not a supported type")
    expect(page.locator(".errorlist")).to_contain_text(
        "bees-copy.md: a duplicate: this collection already holds this file"
    )
    assert (Document.objects.count(), Chunk.objects.count(), Job.objects.count()) == before

    # Refused when extracted: the job names it; no document or chunk is written.
    upload(page, collection, ("scan.pdf", "application/pdf", pdf_bytes([[]])))
    expect(page.locator(".messagelist")).to_contain_text(
        "Not stored: scan.pdf: the file has no text to index"
    )
    assert (Document.objects.count(), Chunk.objects.count()) == before[:2]
    assert errors == []
