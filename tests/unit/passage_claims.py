"""Real excerpts and the claims an AI answer would make about them, to choose and pin the closeness rule.

The excerpts are the chunks the local index stores for the sample corpus and the
LightRAG test corpus (real extraction and chunking, the PDF read by pypdf with its
hard line breaks). Each claim is a paraphrase, as an answer would write it, with
the sentences that support it (``gold``, each given by a piece of its text), or no
sentence at all when the source does not say it (an unsupported claim, on topic).
``bench/passage_threshold.py`` compares scoring rules on them (docs/decisions/0027-closest-passage-and-label-mismatch.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePath

from knowledgeweb.library.chunking import chunk_text
from knowledgeweb.library.extraction import extract

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = {
    "gettysburg-address.md": ROOT / "sample_corpus/documents/gettysburg-address.md",
    "citations.md": ROOT / "sample_corpus/documents/citations.md",
    "local-index.txt": ROOT / "sample_corpus/documents/local-index.txt",
    "providers.html": ROOT / "sample_corpus/documents/providers.html",
    "reviewer-field-guide.pdf": ROOT / "sample_corpus/documents/reviewer-field-guide.pdf",
    "clara-voss.txt": ROOT / "tests/lightrag_real/corpus/clara-voss.txt",
    "halden-telescope.md": ROOT / "tests/lightrag_real/corpus/halden-telescope.md",
    "meridian-observatory.md": ROOT / "tests/lightrag_real/corpus/meridian-observatory.md",
    "northern-sky-survey.txt": ROOT / "tests/lightrag_real/corpus/northern-sky-survey.txt",
}
# Documents on one subject: a claim about one is expected to find nothing in another group.
GROUPS = {
    "gettysburg-address.md": "gettysburg",
    "citations.md": "knowledgeweb",
    "local-index.txt": "knowledgeweb",
    "providers.html": "knowledgeweb",
    "reviewer-field-guide.pdf": "knowledgeweb",
    "clara-voss.txt": "astronomy",
    "halden-telescope.md": "astronomy",
    "meridian-observatory.md": "astronomy",
    "northern-sky-survey.txt": "astronomy",
}


@dataclass(frozen=True, slots=True)
class Claim:
    text: str
    document: str
    gold: tuple[str, ...]  # pieces of the supporting sentences; () when the document does not say it


CLAIMS: tuple[Claim, ...] = (
    # The Gettysburg Address
    Claim(
        "Lincoln said the nation was founded eighty-seven years earlier on the idea that all men are created equal.",
        "gettysburg-address.md",
        ("Four score and seven years ago",),
    ),
    Claim(
        "The speech describes the country as engaged in a great civil war that tests whether it can endure.",
        "gettysburg-address.md",
        ("Now we are engaged in a great civil war",),
    ),
    Claim(
        "Part of the battlefield was dedicated as a final resting place for the soldiers who gave their lives.",
        "gettysburg-address.md",
        ("We have come to dedicate a portion",),
    ),
    Claim(
        "Lincoln argued that the living cannot consecrate or hallow the ground.",
        "gettysburg-address.md",
        ("we can not dedicate --",),
    ),
    Claim(
        "He predicted the world would little note nor long remember the words spoken there.",
        "gettysburg-address.md",
        ("The world will little note",),
    ),
    Claim(
        "The address closes with the hope that government of the people, by the people, for the people, "
        "shall not perish from the earth.",
        "gettysburg-address.md",
        ("It is rather for us to be here dedicated",),
    ),
    Claim(
        "This version of the speech is the Bliss copy.",
        "gettysburg-address.md",
        ("The text of the Bliss copy.",),
    ),
    Claim(
        "Lincoln delivered the address on November 19, 1863.",
        "gettysburg-address.md",
        ("Abraham Lincoln, November 19, 1863.",),
    ),
    Claim(
        "Lincoln called on the living to carry on the unfinished work of those who fought there.",
        "gettysburg-address.md",
        ("It is for us the living",),
    ),
    Claim(
        "He promised that the nation would have a new birth of freedom.",
        "gettysburg-address.md",
        ("It is rather for us to be here dedicated",),
    ),
    Claim(
        "Lincoln told the audience that holding the ceremony was fitting and proper.",
        "gettysburg-address.md",
        ("It is altogether fitting and proper",),
    ),
    Claim(
        "The brave men who struggled there had already consecrated the ground far beyond anyone's power to add to it.",
        "gettysburg-address.md",
        ("The brave men, living and dead",),
    ),
    Claim("Lincoln spoke to a crowd of about 15,000 people.", "gettysburg-address.md", ()),
    Claim(
        "Edward Everett gave a two-hour oration before Lincoln took the stage.", "gettysburg-address.md", ()
    ),
    Claim("The speech lasted barely two minutes.", "gettysburg-address.md", ()),
    # How knowledgeweb resolves citations
    Claim(
        "Each tool message stores both the text the model saw and an artifact listing the evidence.",
        "citations.md",
        ("The tool message carries two things",),
    ),
    Claim(
        "A source id is derived from the provider, title, excerpt, dataset, URL and page of the evidence.",
        "citations.md",
        ("Each piece of evidence has a source id",),
    ),
    Claim(
        "The viewer does not trust the citation label and displays the stored title instead.",
        "citations.md",
        ("The viewer never trusts the label",),
    ),
    Claim(
        "Citations are resolved only against tool messages that appear earlier in the same thread.",
        "citations.md",
        ("When a thread is displayed",),
    ),
    Claim(
        "Evidence that fails a check is silently dropped, and the rest of the message still counts.",
        "citations.md",
        ("Evidence that fails any check",),
    ),
    Claim(
        "A well-formed handle that matches no evidence leaves the citation unresolved.",
        "citations.md",
        ("well formed but matches no evidence",),
    ),
    Claim(
        "Handles with uppercase hex digits or the wrong length are flagged as malformed.",
        "citations.md",
        ("A citation whose handle is malformed",),
    ),
    Claim(
        "Validation is cached per immutable message, keyed by its id and a digest of the content.",
        "citations.md",
        ("Validation results are memoized",),
    ),
    Claim(
        "Opening a resolved citation shows the provider, title, dataset, page, URL and the exact excerpt.",
        "citations.md",
        ("Hovering or focusing it shows a preview",),
    ),
    Claim("The viewer e-mails the reviewer whenever a citation is malformed.", "citations.md", ()),
    # The embedded local index
    Claim(
        "The built-in index lets knowledgeweb work on a fresh machine without RAGFlow or LightRAG.",
        "local-index.txt",
        ("knowledgeweb ships with a local index",),
    ),
    Claim(
        "It uses SQLite FTS5 by default and PostgreSQL full-text search when running on PostgreSQL.",
        "local-index.txt",
        ("The index lives in the application's own database",),
    ),
    Claim(
        "The ingest command accepts Markdown, plain text, HTML and PDF files and walks directories.",
        "local-index.txt",
        ("It reads Markdown, plain text, HTML and PDF files",),
    ),
    Claim(
        "Scripts and styles are stripped when HTML is reduced to text.",
        "local-index.txt",
        ("HTML is reduced to its visible text",),
    ),
    Claim(
        "Chunks never cross a PDF page, so page numbers stay honest.",
        "local-index.txt",
        ("A chunk never spans two PDF pages",),
    ),
    Claim(
        "Ingesting a file a second time updates the existing document rather than duplicating it.",
        "local-index.txt",
        ("Ingesting the same file again",),
    ),
    Claim(
        "Results are ranked with bm25 on SQLite and with ts_rank on PostgreSQL.",
        "local-index.txt",
        ("Search results are ranked with bm25",),
    ),
    Claim(
        "Damaged PDFs and binary files are reported and skipped.",
        "local-index.txt",
        ("Empty files, binary files and damaged PDFs",),
    ),
    Claim("The local index also supports semantic vector search.", "local-index.txt", ()),
    # Retrieval providers at a glance
    Claim(
        "RAGFlow pages are taken only from the positions RAGFlow reports.",
        "providers.html",
        ("Pages come only from the positions RAGFlow reports.",),
    ),
    Claim(
        "LightRAG entity relations are graph facts labelled as unattributed.",
        "providers.html",
        ("LightRAG entity relations are graph facts",),
    ),
    Claim(
        "A LightRAG chunk whose source is unknown can still be read but is never cited.",
        "providers.html",
        ("A chunk without a known source",),
    ),
    Claim(
        "Credentials come from environment variables and are never stored in the database.",
        "providers.html",
        ("Credentials are read from environment variables",),
    ),
    Claim(
        "A binding with no users cannot be used by anyone, and there is no anonymous fallback.",
        "providers.html",
        ("A binding with no users",),
    ),
    Claim("RAGFlow requires a paid licence for document search.", "providers.html", ()),
    # A reviewer's field guide (PDF, hard-wrapped lines)
    Claim(
        "Every claim that matters should be backed by a citation.",
        "reviewer-field-guide.pdf",
        ("Every claim\nthat matters",),
    ),
    Claim(
        "A claim the excerpt does not support is a finding, however confident the answer sounds.",
        "reviewer-field-guide.pdf",
        ("Open each citation and compare",),
    ),
    Claim(
        "Page numbers are only shown for sources that had real pages, such as PDFs.",
        "reviewer-field-guide.pdf",
        ("A page\nnumber is shown only",),
    ),
    Claim(
        "An unresolved citation is displayed as a plain label without a link.",
        "reviewer-field-guide.pdf",
        ("An unresolved citation is shown as a plain label",),
    ),
    Claim(
        "The answer may have invented the source or copied a handle from another thread.",
        "reviewer-field-guide.pdf",
        ("The answer may have invented the source",),
    ),
    Claim(
        "When a retrieval exceeds the budget, the tool message is cut and a notice says so.",
        "reviewer-field-guide.pdf",
        ("When a retrieval returns more text than the budget",),
    ),
    Claim(
        "An answer written from truncated tool output can only cite what survived the cut.",
        "reviewer-field-guide.pdf",
        ("An answer written from a truncated tool message",),
    ),
    Claim("Reviewers should rate each answer on a five-point scale.", "reviewer-field-guide.pdf", ()),
    # The LightRAG test corpus
    Claim(
        "Clara Voss, born in Geneva in 1862, was an astronomer and instrument maker.",
        "clara-voss.txt",
        ("Clara Voss was an astronomer",),
    ),
    Claim(
        "She learned optics at the University of Geneva under Emile Fabre.",
        "clara-voss.txt",
        ("Clara Voss studied optics",),
    ),
    Claim(
        "Fabre taught Voss to grind lenses by hand.",
        "clara-voss.txt",
        ("Emile Fabre taught Clara Voss",),
    ),
    Claim(
        "Voss designed the Halden Telescope together with Tomas Brandt.",
        "clara-voss.txt",
        ("Clara Voss designed the Halden Telescope together",),
    ),
    Claim(
        "Tomas Brandt ground the telescope's main lens in a Grenoble workshop.",
        "halden-telescope.md",
        ("Tomas Brandt ground the main lens",),
    ),
    Claim(
        "The telescope's lens measures forty centimetres.",
        "halden-telescope.md",
        ("The Halden Telescope has a lens of forty centimetres.",),
    ),
    Claim(
        "The Halden Foundation paid for the glass, and the telescope was named after it.",
        "halden-telescope.md",
        ("The Halden Telescope was named after",),
    ),
    Claim(
        "The Meridian Observatory was founded in Lyon in 1891.",
        "meridian-observatory.md",
        ("Clara Voss founded the Meridian Observatory in Lyon",),
    ),
    Claim(
        "Brandt took over from Voss as director of the observatory in 1921.",
        "meridian-observatory.md",
        ("Tomas Brandt succeeded Clara Voss",),
    ),
    Claim(
        "The observatory sits on Fourviere Hill above the old town.",
        "meridian-observatory.md",
        ("The Meridian Observatory stands on Fourviere Hill",),
    ),
    Claim(
        "The survey catalogued double stars from 1905 to 1912.",
        "northern-sky-survey.txt",
        ("The Northern Sky Survey catalogued double stars",),
    ),
    Claim(
        "Ines Moreau calculated the orbits for the survey.",
        "northern-sky-survey.txt",
        ("Ines Moreau computed the orbits",),
    ),
    Claim(
        "Moreau went on to publish the Lyon Catalogue of double stars.",
        "northern-sky-survey.txt",
        ("Ines Moreau later published",),
    ),
    # Claims that join two sentences: either is a right mark, both when they tie.
    Claim(
        "Clara Voss founded the Meridian Observatory in Lyon in 1891 and directed it for thirty years.",
        "meridian-observatory.md",
        (
            "Clara Voss founded the Meridian Observatory in Lyon",
            "Clara Voss directed the Meridian Observatory",
        ),
    ),
    Claim(
        "The Northern Sky Survey, led by Tomas Brandt, used the Halden Telescope on every clear night.",
        "northern-sky-survey.txt",
        ("Tomas Brandt led the Northern Sky Survey", "The Northern Sky Survey used the Halden Telescope"),
    ),
    Claim(
        "Tool output has a budget, and evidence cut by it is pruned from the message.",
        "reviewer-field-guide.pdf",
        ("Tool output has a budget.", "Evidence that no longer"),
    ),
    Claim(
        "Lincoln said the dead had consecrated the field beyond the power of the living to add or detract.",
        "gettysburg-address.md",
        ("The brave men, living and dead",),
    ),
    Claim("Clara Voss won a gold medal from the Royal Astronomical Society in 1899.", "clara-voss.txt", ()),
    Claim("The Halden Telescope was destroyed by a fire in 1944.", "halden-telescope.md", ()),
    Claim("Ines Moreau discovered a comet in 1910.", "northern-sky-survey.txt", ()),
)


@cache
def chunks(document: str) -> tuple[str, ...]:
    """The excerpts the local index stores for ``document``: real extraction, real chunking."""
    path = DOCUMENTS[document]
    extracted = extract(PurePath(path.name), path.read_bytes())
    return tuple(chunk for section in extracted.sections for chunk in chunk_text(section.text))
