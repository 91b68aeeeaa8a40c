"""Text extracted from a document holds nothing a database cannot store (issue 22, item 4).

A PDF's text comes from its fonts' maps, which can name U+0000 or an unpaired surrogate;
PostgreSQL refuses the first and no driver can encode the second. They are dropped at
extraction, so the document is indexed rather than failing at the write.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

import pypdf
import pytest

from knowledgeweb.library.extraction import extract
from tests.pdf_writer import pdf_bytes


def test_nul_and_unpaired_surrogates_in_pdf_text_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    def hostile_text(self: Any, *args: Any, **kwargs: Any) -> str:
        return "Owls\x00 hoot \ud800at night\udfff."

    monkeypatch.setattr(pypdf.PageObject, "extract_text", hostile_text)

    document = extract(PurePath("owls.pdf"), pdf_bytes([["placeholder"]], title="Owls"))

    assert [section.text for section in document.sections] == ["Owls hoot at night."]
    assert document.title == "Owls"
