"""What each format contributes: visible text, a title, a real URL, real pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledgeweb.library.chunking import CHUNK_LIMIT
from knowledgeweb.library.models import Document
from knowledgeweb.library.services import IngestError, collection_get_or_create, file_ingest
from tests.pdf_writer import pdf_bytes

pytestmark = pytest.mark.django_db


def _ingest_file(path: Path) -> Document:
    return file_ingest(collection=collection_get_or_create(name="docs"), path=path, key=path.name).document


def _texts(document: Document) -> list[str]:
    return list(document.chunks.order_by("ordinal").values_list("text", flat=True))


HTML = """<!doctype html>
<html><head>
  <title>Visible &amp; clear</title>
  <link rel="canonical" href="https://example.org/visible">
  <style>body { color: red; } .secret { display: none }</style>
  <script>var tracking = "SCRIPT TEXT";</script>
</head><body>
  <nav>Menu</nav>
  <h1>Heading</h1>
  <p>First <b>bold</b> paragraph.</p>
  <script type="module">console.log("MORE SCRIPT")</script>
  <div hidden><p>HIDDEN TEXT</p><div>still hidden</div></div>
  <noscript>NOSCRIPT TEXT</noscript>
  <template><p>TEMPLATE TEXT</p></template>
  <p>Second&nbsp;paragraph<br>after a break.</p>
</body></html>
"""


def test_html_keeps_only_visible_text(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text(HTML, encoding="utf-8")

    document = _ingest_file(path)
    text = "\n\n".join(_texts(document))

    assert text == "Menu\n\nHeading\n\nFirst bold paragraph.\n\nSecond paragraph\n\nafter a break."
    for invisible in ("SCRIPT", "color", "HIDDEN", "still hidden", "NOSCRIPT", "TEMPLATE", "Visible"):
        assert invisible not in text
    assert document.title == "Visible & clear"
    assert document.source_url == "https://example.org/visible"


def test_html_without_a_title_uses_its_first_heading(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text("<h1>The <em>real</em> heading</h1><p>Body.</p>", encoding="utf-8")

    assert _ingest_file(path).title == "The real heading"


def test_html_takes_only_its_first_document_title_not_an_icons_or_a_second_one(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text(
        "<title>Real</title><svg><title>Icon</title></svg><p>Text.</p><title>Second</title>",
        encoding="utf-8",
    )

    document = _ingest_file(path)

    assert document.title == "Real"
    assert _texts(document) == ["Text."]


def test_html_with_only_scripts_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "app.html"
    path.write_text("<html><script>app()</script><style>p{}</style></html>", encoding="utf-8")

    with pytest.raises(IngestError, match=r"^the file has no text to index$"):
        _ingest_file(path)
    assert Document.objects.count() == 0


@pytest.mark.parametrize(
    "href",
    [
        "file:///home/someone/page.html",
        "javascript:alert(1)",
        "/relative/page",
        "ftp://example.org/x",
        "https://",
    ],
)
def test_a_canonical_link_that_is_not_a_public_http_url_is_dropped(tmp_path: Path, href: str) -> None:
    path = tmp_path / "page.html"
    path.write_text(f'<link rel="canonical" href="{href}"><p>Text.</p>', encoding="utf-8")

    assert _ingest_file(path).source_url == ""


def test_markdown_front_matter_gives_title_and_source_url_and_is_not_indexed(tmp_path: Path) -> None:
    path = tmp_path / "speech.md"
    path.write_text(
        "---\ntitle: A Speech\nsource_url: https://example.org/speech\n---\n# Heading\n\nFour score.\n",
        encoding="utf-8",
    )

    document = _ingest_file(path)

    assert (document.title, document.source_url) == ("A Speech", "https://example.org/speech")
    assert _texts(document) == ["# Heading\n\nFour score."]


def test_markdown_without_front_matter_takes_its_first_heading_and_no_url(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("Intro line.\n\n## Not this\n\n# The Title\n\nBody.\n", encoding="utf-8")

    document = _ingest_file(path)

    assert (document.title, document.source_url) == ("The Title", "")


def test_a_file_path_in_front_matter_never_becomes_a_url(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("---\nsource_url: /srv/docs/notes.md\n---\nBody.\n", encoding="utf-8")

    document = _ingest_file(path)

    assert (document.title, document.source_url) == ("notes.md", "")


def test_text_files_take_a_short_first_line_as_title_else_the_file_name(tmp_path: Path) -> None:
    short = tmp_path / "short.txt"
    short.write_text("\n\nA short title\n\nBody.\n", encoding="utf-8")
    long = tmp_path / "long.txt"
    long.write_text("word " * 100 + "\n", encoding="utf-8")

    assert _ingest_file(short).title == "A short title"
    assert _ingest_file(long).title == "long.txt"


def test_pdf_pages_are_real_and_a_chunk_never_spans_two_pages(tmp_path: Path) -> None:
    path = tmp_path / "book.pdf"
    path.write_bytes(
        pdf_bytes(
            [["Alpha one.", "", "Alpha two."], ["Beta (with parentheses)."], ["Gamma."]],
            title="The Book",
        )
    )

    document = _ingest_file(path)

    assert document.title == "The Book"
    assert list(document.chunks.order_by("ordinal").values_list("page", "text")) == [
        (1, "Alpha one.\n\nAlpha two."),
        (2, "Beta (with parentheses)."),
        (3, "Gamma."),
    ]


def test_a_pdf_without_a_title_is_named_after_its_file(tmp_path: Path) -> None:
    path = tmp_path / "untitled.pdf"
    path.write_bytes(pdf_bytes([["Text."]]))

    assert _ingest_file(path).title == "untitled.pdf"


def test_long_documents_are_split_into_chunks_within_the_limit(tmp_path: Path) -> None:
    paragraphs = [f"Paragraph {n} " + "filler words here. " * 12 for n in range(30)]
    path = tmp_path / "long.md"
    path.write_text("\n\n".join(paragraphs), encoding="utf-8")

    texts = _texts(_ingest_file(path))

    assert len(texts) > 1
    assert all(len(text) <= CHUNK_LIMIT for text in texts)
    assert "\n\n".join(texts).split("\n\n") == [p.strip() for p in paragraphs]


def test_nul_characters_in_pdf_text_are_dropped_so_any_database_can_store_them(tmp_path: Path) -> None:
    path = tmp_path / "nul.pdf"
    path.write_bytes(pdf_bytes([["Null\x00byte here."]], title="Bad\x00title"))

    document = _ingest_file(path)

    assert document.title == "Badtitle"
    assert _texts(document) == ["Nullbyte here."]
