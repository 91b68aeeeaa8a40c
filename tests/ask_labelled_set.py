"""The labelled questions the extractive composer's abstention is measured on.

Every question is about the demo corpus (``sample_corpus/documents``, as ``manage.py
demo`` ingests it into the local index). Half can be answered from one sentence of it:
each names the phrases of which a quoted sentence must hold at least one. Half cannot:
some are off-topic, most are near-misses that share the corpus's words (Lincoln, the
Gettysburg Address, chunks, RAGFlow, LightRAG, citations) but ask something it never says.

The set was written and committed before the abstention rule it measures was changed, and
the rule was chosen for questions in general, not to fit these. Used by
``tests/integration/test_ask_labelled_questions.py`` and ``bench/abstention.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

#: (question, phrases: a quoted sentence must contain one of them)
ANSWERABLE: list[tuple[str, tuple[str, ...]]] = [
    # The README's example query and the demo's own questions.
    (
        "how are citations verified?",
        (
            "recomputes every source id",
            "resolved against the tool messages",
            "compare the claim with the excerpt",
        ),
    ),
    (
        "How does the viewer resolve a citation against the evidence of earlier tool messages?",
        ("resolved against the tool messages",),
    ),
    (
        "What did Lincoln ask the living to resolve, and what new birth of freedom did he hope for?",
        ("shall not have died in vain", "new birth of freedom"),
    ),
    ("What should a reviewer do when a citation is unresolved?", ("as unsupported",)),
    (
        "What happens to evidence that no longer appears in full after the tool output is cut?",
        ("is pruned from the message",),
    ),
    # Who / when / what, whose answers share few words with the question.
    ("Who delivered the Gettysburg Address, and when?", ("Abraham Lincoln, November 19, 1863.",)),
    ("When was the Gettysburg Address given?", ("November 19, 1863",)),
    ("Who gave the Gettysburg Address?", ("Abraham Lincoln",)),
    ("Which copy of the Gettysburg Address is this?", ("the Bliss copy",)),
    ("What war was the nation engaged in?", ("great civil war",)),
    ("When did our fathers bring forth a new nation?", ("Four score and seven years ago",)),
    ("To what proposition was the new nation dedicated?", ("all men are created equal",)),
    ("What did Lincoln say about government of the people?", ("government of the people, by the people",)),
    ("What did the brave men who struggled here do to the ground?", ("have consecrated it",)),
    ("What will the world little note nor long remember?", ("The world will little note",)),
    ("What file formats can the ingest command read?", ("Markdown, plain text, HTML and PDF",)),
    ("Which full-text search does the local index use on SQLite?", ("FTS5",)),
    ("How are search results ranked?", ("bm25",)),
    ("What does PostgreSQL rank search results with?", ("ts_rank",)),
    ("Where does the local index live?", ("application's own database",)),
    ("Does a chunk ever span two PDF pages?", ("never spans two PDF pages",)),
    ("What happens when the same file is ingested again?", ("updates the document instead of duplicating",)),
    ("What happens to damaged PDFs when ingesting?", ("reported and skipped",)),
    ("How is a source id computed?", ("source id computed from its provider",)),
    ("What does the viewer show instead of the link label?", ("title stored with the evidence",)),
    ("What is a malformed citation?", ("is marked as malformed", "uppercase hex digits")),
    ("How are validation results memoized?", ("memoized for each immutable message",)),
    ("Where are provider credentials read from?", ("environment variables",)),
    ("Can a binding with no users be used?", ("can be used by nobody",)),
    ("How are LightRAG entity relations labelled?", ("labelled as unattributed",)),
    ("When does a result keep RAGFlow's native citation snapshot?", ("complete locators",)),
    ("Who may use a provider?", ("exact users who may use it",)),
    ("When is a page number shown?", ("only when the source had real pages",)),
    (
        "What happens to the tool message when a retrieval returns more text than the budget allows?",
        ("the tool message is cut",),
    ),
]

UNANSWERABLE: list[str] = [
    # Off-topic.
    "What is the boiling point of mercury in kelvin?",
    "Who won the football world cup in 1998?",
    "What is the capital city of Australia?",
    "How many moons does Jupiter have?",
    "How do I reset my password?",
    "What is the recipe for apple pie?",
    # Near-misses on the Gettysburg Address.
    "What year did the civil war end?",
    "Who was president after Lincoln?",
    "Who assassinated Abraham Lincoln?",
    "What is the population of Gettysburg today?",
    "How many soldiers died at the battle of Gettysburg?",
    "What did Lincoln say about slavery?",
    "Who spoke before Lincoln at Gettysburg?",
    "How long did the Gettysburg Address take to deliver?",
    # Near-misses on the local index.
    "Does the local index support vector search or embeddings?",
    "What is the maximum chunk size in characters?",
    "How long does ingesting a PDF take?",
    "Can the local index search Word documents?",
    "How much disk space does the local index use?",
    # Near-misses on providers and bindings.
    "How much does a RAGFlow enterprise licence cost?",
    "Which programming language is LightRAG written in?",
    "Who created RAGFlow?",
    "When was LightRAG first released?",
    "How do I rotate a binding's API key?",
    "What does LightRAG charge per query?",
    # Near-misses on citations and reviewing.
    "How are citations encrypted?",
    "How does a reviewer export a thread to PDF?",
    "Who reviews the reviewers?",
    "How many citations can one answer hold?",
    "What font does the citation viewer use?",
]


def corpus_directory(base_dir: Path) -> Path:
    return base_dir / "sample_corpus" / "documents"


@dataclass
class AbstentionScore:
    """How the composer's abstentions compare with the labels."""

    #: Unanswerable questions it abstained on (true positives of abstention).
    right_abstentions: list[str] = field(default_factory=list)
    #: Answerable questions it abstained on (false positives).
    wrong_abstentions: list[str] = field(default_factory=list)
    #: Unanswerable questions it answered anyway (false negatives).
    wrong_answers: list[str] = field(default_factory=list)
    #: Answerable questions answered without quoting any of the expected phrases.
    off_target: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        abstained = len(self.right_abstentions) + len(self.wrong_abstentions)
        return len(self.right_abstentions) / abstained if abstained else 1.0

    @property
    def recall(self) -> float:
        unanswerable = len(self.right_abstentions) + len(self.wrong_answers)
        return len(self.right_abstentions) / unanswerable if unanswerable else 1.0


def quoted_lines(answer: str) -> list[str]:
    """The quoted sentences of an extractive answer, unescaped."""
    return [line[2:].replace("\\", "") for line in answer.splitlines() if line.startswith("- ")]


def score(answers: dict[str, str]) -> AbstentionScore:
    """Score ``answers`` (question -> the composer's Markdown) against the labels.

    An answer abstains when it quotes nothing (the abstention, or nothing found).
    """
    result = AbstentionScore()
    for question, phrases in ANSWERABLE:
        quotes = quoted_lines(answers[question])
        if not quotes:
            result.wrong_abstentions.append(question)
        elif not any(phrase in quote for quote in quotes for phrase in phrases):
            result.off_target.append(question)
    for question in UNANSWERABLE:
        if quoted_lines(answers[question]):
            result.wrong_answers.append(question)
        else:
            result.right_abstentions.append(question)
    return result
