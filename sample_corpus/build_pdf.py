"""Regenerate ``documents/reviewer-field-guide.pdf`` (run from the repository root).

    .venv/bin/python sample_corpus/build_pdf.py

The PDF is written with knowledgeweb's own tiny PDF writer, so its three pages
are real pages and the local index cites them by page number.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.pdf_writer import pdf_bytes  # noqa: E402

TITLE = "A reviewer's field guide to cited answers"

PAGES = [
    [
        "A reviewer's field guide to cited answers",
        "Page 1: Reading a cited answer",
        "Start with the question, then read the answer one claim at a time. Every claim that "
        "matters should carry a citation. Open each citation and compare the claim with the "
        "excerpt: the excerpt is exactly the text the retrieval returned, so a claim that the "
        "excerpt does not support is a finding, however confident the answer sounds.",
        "Check the provider, the dataset and the page shown with the excerpt. A page number is "
        "shown only when the source had real pages, such as a PDF. A URL is shown only when the "
        "document declared a real web address; the reviewer can follow it to read the whole "
        "document.",
    ],
    [
        "Page 2: When a citation does not resolve",
        "An unresolved citation is shown as a plain label with no link. It means the answer "
        "pointed at evidence that no earlier tool message in the thread provides. The answer may "
        "have invented the source, copied a handle from another thread, or cited a retrieval "
        "that was never run.",
        "Treat the claim behind an unresolved citation as unsupported. Do not search for the "
        "source yourself and then count the claim as cited: the thread must carry its own "
        "evidence. A malformed citation, such as one with uppercase hex digits, is treated the "
        "same way.",
    ],
    [
        "Page 3: Truncated tool output",
        "Tool output has a budget. When a retrieval returns more text than the budget allows, "
        "the tool message is cut and a notice says so. Evidence that no longer appears in full "
        "is pruned from the message, and a citation link whose evidence was cut becomes a plain "
        "label.",
        "An answer written from a truncated tool message can only cite what survived the cut. "
        "If the answer seems to miss an obvious source, check the tool message for a truncation "
        "notice before concluding that the source was never retrieved.",
    ],
]


def page_lines(paragraphs: list[str]) -> list[str]:
    lines: list[str] = []
    for paragraph in paragraphs:
        if lines:
            lines.append("")
        lines.extend(textwrap.wrap(paragraph, width=80))
    return lines


def main() -> None:
    target = ROOT / "sample_corpus" / "documents" / "reviewer-field-guide.pdf"
    target.write_bytes(pdf_bytes([page_lines(page) for page in PAGES], title=TITLE))


if __name__ == "__main__":
    main()
