"""Read supported files into plain text sections, one per real page for PDFs.

Nothing here touches the database. Every way a file
can be unusable raises ``ExtractionError`` with a message fit for the user.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import PurePath

import pypdf
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
TEXT_SUFFIXES = frozenset({".txt", ".text"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
PDF_SUFFIXES = frozenset({".pdf"})
SUPPORTED_SUFFIXES = MARKDOWN_SUFFIXES | TEXT_SUFFIXES | HTML_SUFFIXES | PDF_SUFFIXES

MAX_TITLE_LENGTH = 1024
MAX_PDF_PAGE = 1_000_000
# A first line longer than this is prose, not a title.
_MAX_LINE_TITLE = 200
# Enough of a file to tell text from binary data.
_SNIFF_BYTES = 8192


class ExtractionError(Exception):
    """The file cannot be indexed; the message says why."""


@dataclass(frozen=True, slots=True)
class Section:
    """Text with the real page it came from (PDF only)."""

    text: str
    page: int | None = None


@dataclass(frozen=True, slots=True)
class ExtractedDocument:
    title: str
    sections: tuple[Section, ...]
    # Only ever an http(s) URL the file itself declares; empty otherwise.
    source_url: str = ""


def is_supported(path: PurePath) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def extract(path: PurePath, data: bytes) -> ExtractedDocument:
    """Extract ``data`` (the bytes of ``path``) according to the file's suffix."""
    suffix = path.suffix.lower()
    if not data.strip():
        raise ExtractionError("the file is empty")
    if suffix in PDF_SUFFIXES:
        return _extract_pdf(path, data)
    text = _decode_text(data)
    if suffix in MARKDOWN_SUFFIXES:
        return _extract_markdown(path, text)
    if suffix in HTML_SUFFIXES:
        return _extract_html(path, text)
    if suffix in TEXT_SUFFIXES:
        return _extract_text(path, text)
    raise ExtractionError(f"unsupported file type {suffix or '(no suffix)'!r}")


_PUBLIC_URL = URLValidator(schemes=["http", "https"])


def public_url(value: str) -> str:
    """``value`` when it is a valid http(s) URL, else empty: file paths never become URLs."""
    value = value.strip()
    if not value or len(value) > 2048:
        return ""
    try:
        _PUBLIC_URL(value)
    except ValidationError:
        return ""
    return value


# --- text formats ------------------------------------------------------------


def _decode_text(data: bytes) -> str:
    # Anywhere in the file, not just the sniffed start: PostgreSQL cannot store NUL.
    if b"\x00" in data:
        raise ExtractionError("the file looks binary (it contains NUL bytes), not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ExtractionError(f"the file is not UTF-8 text (bad byte at offset {exc.start})") from exc
    if _control_ratio(text[:_SNIFF_BYTES]) > 0.1:
        raise ExtractionError("the file looks binary (mostly control characters), not text")
    return text


def _control_ratio(text: str) -> float:
    if not text:
        return 0.0
    controls = sum(1 for char in text if ord(char) < 32 and char not in "\t\n\r\f")
    return controls / len(text)


def _title_or_name(candidate: str, path: PurePath) -> str:
    title = " ".join(candidate.split())[:MAX_TITLE_LENGTH]
    return title or path.name[:MAX_TITLE_LENGTH]


def _require_text(sections: list[Section]) -> tuple[Section, ...]:
    kept = tuple(section for section in sections if section.text.strip())
    if not kept:
        raise ExtractionError("the file has no text to index")
    return kept


def _extract_text(path: PurePath, text: str) -> ExtractedDocument:
    first_line = next((line for line in text.splitlines() if line.strip()), "")
    title = first_line if len(first_line.strip()) <= _MAX_LINE_TITLE else ""
    return ExtractedDocument(title=_title_or_name(title, path), sections=_require_text([Section(text)]))


_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_ATX_HEADING = re.compile(r"^[ ]{0,3}#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


def _extract_markdown(path: PurePath, text: str) -> ExtractedDocument:
    meta: dict[str, str] = {}
    match = _FRONT_MATTER.match(text)
    if match:
        for line in match.group(1).splitlines():
            key, sep, value = line.partition(":")
            if sep:
                meta[key.strip().lower()] = value.strip().strip("\"'")
        text = text[match.end() :]
    title = meta.get("title", "")
    if not title:
        heading = _ATX_HEADING.search(text)
        title = heading.group(1) if heading else ""
    return ExtractedDocument(
        title=_title_or_name(title, path),
        sections=_require_text([Section(text)]),
        source_url=public_url(meta.get("source_url", "")),
    )


# --- HTML --------------------------------------------------------------------

# Elements whose content is never shown as text.
_INVISIBLE = frozenset({"script", "style", "template", "noscript", "head", "svg", "math", "iframe", "object"})
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
)
# Elements that end a paragraph of visible text.
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption",
        "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav",
        "ol", "p", "pre", "section", "table", "td", "th", "tr", "ul",
    }
)  # fmt: skip


class _VisibleText(HTMLParser):
    """Collects visible text in paragraphs, the ``<title>`` and a canonical link."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.paragraphs: list[str] = []
        self.title = ""
        self.first_heading = ""
        self.canonical = ""
        self._current: list[str] = []
        self._skip_tag: str | None = None
        self._skip_depth = 0
        # Inside a <title>; ``_title_seen`` keeps only the first one as the title.
        self._in_title = False
        self._title_seen = False
        self._title_collecting = False
        self._h1: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "link" and "canonical" in (attributes.get("rel") or "").lower().split():
            self.canonical = self.canonical or (attributes.get("href") or "")
        if tag == "title":
            # An <svg> or <math> title names a picture, and a second <title> is ignored by browsers.
            self._in_title = True
            self._title_collecting = self._skip_tag in (None, "head") and not self._title_seen
            self._title_seen = self._title_seen or self._title_collecting
            return
        if self._skip_tag is not None:
            if tag == self._skip_tag and tag not in _VOID:
                self._skip_depth += 1
            return
        hidden = "hidden" in attributes or (attributes.get("aria-hidden") or "").lower() == "true"
        if (tag in _INVISIBLE or hidden) and tag not in _VOID:
            self._skip_tag, self._skip_depth = tag, 1
            return
        if tag in _BLOCKS:
            self._flush()
        if tag == "h1" and not self.first_heading:
            self._h1 = []

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # ``<br/>`` and friends: a void element never opens a skipped region.
        if tag in _VOID:
            self.handle_starttag(tag, attrs)
        elif self._skip_tag is None and tag in _BLOCKS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
            return
        if self._skip_tag is not None:
            if tag == self._skip_tag:
                self._skip_depth -= 1
                if self._skip_depth == 0:
                    self._skip_tag = None
            return
        if tag in _BLOCKS:
            self._flush()
        if tag == "h1" and self._h1 is not None:
            self.first_heading = " ".join("".join(self._h1).split())
            self._h1 = None

    def handle_data(self, data: str) -> None:
        if self._in_title:
            # Title text is never body text, even when it is not the title.
            if self._title_collecting:
                self.title += data
            return
        if self._skip_tag is not None:
            return
        self._current.append(data)
        if self._h1 is not None:
            self._h1.append(data)

    def close(self) -> None:
        super().close()
        self._flush()

    def _flush(self) -> None:
        paragraph = " ".join("".join(self._current).split())
        if paragraph:
            self.paragraphs.append(paragraph)
        self._current = []


def _extract_html(path: PurePath, text: str) -> ExtractedDocument:
    parser = _VisibleText()
    parser.feed(text)
    parser.close()
    return ExtractedDocument(
        title=_title_or_name(parser.title or parser.first_heading, path),
        sections=_require_text([Section("\n\n".join(parser.paragraphs))]),
        source_url=public_url(parser.canonical),
    )


# --- PDF ---------------------------------------------------------------------


@contextmanager
def _quiet_pypdf() -> Iterator[None]:
    """pypdf logs recoverable damage as warnings; the caller reports failures itself."""
    logger = logging.getLogger("pypdf")
    previous = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(previous)


def _page_text(page: pypdf.PageObject) -> str:
    # Layout mode keeps the blank lines between paragraphs; plain mode is the fallback.
    try:
        text = page.extract_text(extraction_mode="layout")
    except Exception:  # pypdf's layout engine fails on some valid files
        text = page.extract_text()
    return "\n".join(" ".join(line.split()) for line in _storable(text).splitlines())


# NUL can appear in badly encoded PDF text and PostgreSQL cannot store it; a font's
# ToUnicode map can name an unpaired surrogate, which no database driver can encode.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _storable(text: str) -> str:
    return _UNSTORABLE.sub("", text)


def _extract_pdf(path: PurePath, data: bytes) -> ExtractedDocument:
    if b"%PDF-" not in data[:1024]:
        raise ExtractionError("the file is not a PDF (no %PDF header)")
    with _quiet_pypdf():
        try:
            reader = pypdf.PdfReader(io.BytesIO(data))
            if reader.is_encrypted:
                raise ExtractionError("the PDF is encrypted")
            sections = [
                Section(_page_text(page), page=number)
                for number, page in enumerate(reader.pages, start=1)
                if number <= MAX_PDF_PAGE
            ]
            metadata_title = (reader.metadata.title if reader.metadata else None) or ""
        except ExtractionError:
            raise
        # A damaged PDF can fail anywhere inside pypdf, with many exception types.
        except Exception as exc:
            raise ExtractionError(f"the PDF cannot be read ({type(exc).__name__}: {exc})") from exc
    return ExtractedDocument(
        title=_title_or_name(_storable(str(metadata_title)), path),
        sections=_require_text(sections),
    )
