"""A tiny writer for text-only PDFs with real pages.

The sample corpus and the tests need PDFs whose page boundaries are real, and
no PDF-writing dependency is installed for that, so this writes the few objects
a text page needs: a catalog, a page tree, one Helvetica font and, per page, a
content stream that shows each line. Text is encoded as WinAnsi (Latin-1 here).
"""

from __future__ import annotations

from collections.abc import Sequence

PAGE_WIDTH = 612
PAGE_HEIGHT = 792
_FONT_SIZE = 11
_LEADING = 15
_MARGIN = 72


def _literal(text: str) -> bytes:
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return b"(" + escaped.encode("latin-1", errors="replace") + b")"


def _content_stream(lines: Sequence[str]) -> bytes:
    parts = [b"BT", f"/F1 {_FONT_SIZE} Tf {_LEADING} TL {_MARGIN} {PAGE_HEIGHT - _MARGIN} Td".encode()]
    for line in lines:
        # An empty line still moves down, so paragraphs keep their blank line.
        parts.append(_literal(line) + b" Tj T*" if line else b"T*")
    parts.append(b"ET")
    return b"\n".join(parts)


def pdf_bytes(pages: Sequence[Sequence[str]], *, title: str | None = None) -> bytes:
    """A PDF with one page per item of ``pages``; each item is that page's lines."""
    if not pages:
        raise ValueError("A PDF needs at least one page.")
    objects: list[bytes] = []
    page_count = len(pages)
    # 1 catalog, 2 page tree, 3 font, 4 info, then (page, contents) pairs.
    first_page = 5
    kids = " ".join(f"{first_page + 2 * i} 0 R" for i in range(page_count))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {page_count} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    objects.append(b"<< /Title " + _literal(title or "") + b" /Producer (knowledgeweb) >>")
    for index, lines in enumerate(pages):
        contents_ref = first_page + 2 * index + 1
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {PAGE_WIDTH} {PAGE_HEIGHT}] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {contents_ref} 0 R >>".encode()
        )
        stream = _content_stream(lines)
        objects.append(f"<< /Length {len(stream)} >>\nstream\n".encode() + stream + b"\nendstream")

    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref_at = len(out)
    out += f"xref\n0 {len(objects) + 1}\n".encode()
    out += b"0000000000 65535 f \n"
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    info = "" if title is None else " /Info 4 0 R"
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\nstartxref\n{xref_at}\n%%EOF\n".encode()
    )
    return bytes(out)
