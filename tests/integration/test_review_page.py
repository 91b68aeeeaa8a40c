"""What the thread page shows a reviewer, through Django's real client: numbers bound to
sources, the answer's label kept only where it misleads, per-answer references, backlinks,
the closest passage marked without JavaScript, links to the evidence in its document and
at its passage, honest tool summaries.
"""

from __future__ import annotations

import html as html_lib
import json
import re
from html.parser import HTMLParser
from urllib.parse import unquote

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.accounts.services import token_create
from knowledgeweb.knowledge import RetrievalHit
from knowledgeweb.retrieval import retrieval_search
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.services import message_append, thread_create
from tests.e2e.review_scenarios import summaries_thread
from tests.factories import BindingFactory, CollectionFactory, DocumentFactory, logged_in
from tests.searches import hit_handles, record_search

pytestmark = pytest.mark.django_db

HANDLE = re.compile(r"\(#(knowledge-source-[a-f0-9]{32})\)")
SPEECH = (
    "Four score and seven years ago our fathers brought forth on this continent a new nation. "
    "Now we are engaged in a great civil war, testing whether that nation can long endure. "
    "We are met on a great battle-field of that war."
)


@pytest.fixture
def reader() -> User:
    return User.objects.create_user("reader", password="pw-reader-1")


@pytest.fixture
def client_for(reader: User) -> Client:
    return logged_in(reader)


def _tool(thread: Thread, *hits: RetrievalHit, query: str = "q", provider: str = "local") -> list[str]:
    _, formatted = record_search(thread, *hits, query=query, provider=provider)
    return hit_handles(formatted)


def _page(client: Client, thread: Thread) -> str:
    response = client.get(f"/threads/{thread.id}/")
    assert response.status_code == 200
    return response.content.decode()


def _hooks(page: str) -> list[str]:
    return re.findall(r'<a class="citation" data-citation="resolved"[^>]*>.*?</a>', page)


def _entry(page: str, handle: str) -> str:
    match = re.search(rf'<li class="source" id="{handle}".*?</li>', page, re.S)
    assert match is not None
    return match.group(0)


def _two_answers(reader: User) -> tuple[Thread, str, str]:
    thread = thread_create(owner=reader, title="Lincoln")
    message_append(thread=thread, type="human", content="What did Lincoln say?")
    speech, planets = _tool(
        thread,
        RetrievalHit(text=SPEECH, title="The Gettysburg Address", dataset_name="Speeches"),
        RetrievalHit(
            text="Mercury is the smallest planet.", title="Planets primer", dataset_name="Astronomy"
        ),
    )
    message_append(
        thread=thread,
        type="ai",
        content=(
            f"They met on a great battle-field of that war [citation:NASA Earth Fact Sheet, 2024](#{speech})."
        ),
    )
    message_append(thread=thread, type="human", content="And?")
    message_append(
        thread=thread,
        type="ai",
        content=f"Mercury is small [citation:1](#{planets}). The war tested the nation [Gettysburg](#{speech}).",
    )
    return thread, speech, planets


def test_citations_are_numbered_by_source_in_order_of_first_citation(
    reader: User, client_for: Client
) -> None:
    thread, speech, planets = _two_answers(reader)
    page = _page(client_for, thread)
    hooks = _hooks(page)
    numbers = [re.search(r'class="citation-number">(\[\d+\])<', h).group(1) for h in hooks]  # type: ignore[union-attr]
    targets = [re.search(r'href="#([^"]+)"', h).group(1) for h in hooks]  # type: ignore[union-attr]
    assert list(zip(targets, numbers, strict=True)) == [(speech, "[1]"), (planets, "[2]"), (speech, "[1]")]
    assert "NASA" not in re.sub(r'data-label="[^"]*"', "", page.split('<aside class="sources-panel"')[0])
    assert "citation:" not in page.split('<aside class="sources-panel"')[0]
    # The panel numbers its entries the same way.
    # The number opens the source with every claim citing it.
    for handle, number in ((speech, 1), (planets, 2)):
        source_id = handle.removeprefix("knowledge-source-")
        assert (
            f'<a class="source-number" data-source-number data-panel-source href="#{handle}" '
            f'data-source-id="{source_id}" aria-label="Source [{number}]: open it with the claims citing it">'
            f"[{number}]</a>"
        ) in _entry(page, handle)


def test_the_report_flags_a_label_that_names_another_source(reader: User) -> None:
    thread, _, _ = _two_answers(reader)
    _, raw = token_create(user=reader, name="t")
    response = Client().get(f"/api/threads/{thread.id}/citations", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert response.status_code == 200
    flags = [(c["label"], c["label_mismatch"]) for m in response.json()["messages"] for c in m["citations"]]
    assert flags == [
        ("citation:NASA Earth Fact Sheet, 2024", True),
        ("citation:1", False),
        ("Gettysburg", False),
    ]
    page = _page(logged_in(reader), thread)
    assert _attribute_values(page, "data-label") == ["NASA Earth Fact Sheet, 2024"]


class _Attributes(HTMLParser):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.values: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.values.extend(value or "" for key, value in attrs if key == self.name)


def _attribute_values(page: str, name: str) -> list[str]:
    """Every value of the attribute ``name`` as a browser reads it (entities decoded)."""
    parser = _Attributes(name)
    parser.feed(page)
    return parser.values


def test_each_answer_lists_its_references_and_each_source_its_backlinks(
    reader: User, client_for: Client
) -> None:
    thread, speech, planets = _two_answers(reader)
    page = _page(client_for, thread)
    sections = re.findall(r'<section class="answer-sources".*?</section>', page, re.S)
    assert len(sections) == 2
    first = re.findall(r'<li><a href="#([^"]+)" data-answer-source="[^"]+">(.*?)</a>', sections[0])
    second = re.findall(r'<li><a href="#([^"]+)" data-answer-source="[^"]+">(.*?)</a>', sections[1])
    number = '<span class="citation-number">[{}]</span> {}'
    assert first == [(speech, number.format(1, "The Gettysburg Address"))]
    # Listed by number, though the answer cites [2] first.
    assert second == [
        (speech, number.format(1, "The Gettysburg Address")),
        (planets, number.format(2, "Planets primer")),
    ]
    assert "local · Speeches" in sections[0]

    anchors = [re.search(r' id="(cite-[0-9a-f]+-\d+)"', h).group(1) for h in _hooks(page)]  # type: ignore[union-attr]
    backlinks = re.findall(r'<a href="#([^"]+)" data-backlink="[^"]+">([^<]+)</a>', _entry(page, speech))
    assert backlinks == [(anchors[0], "answer 1"), (anchors[2], "answer 2")]
    assert re.findall(r'data-backlink="[^"]+">([^<]+)<', _entry(page, planets)) == ["answer 2"]
    # Every anchor a backlink names is on the page exactly once.
    for anchor in anchors:
        assert page.count(f'id="{anchor}"') == 1


def test_the_panel_marks_the_passage_closest_to_the_claims_and_no_other(
    reader: User, client_for: Client
) -> None:
    thread, speech, planets = _two_answers(reader)
    page = _page(client_for, thread)
    marks = re.findall(r"<mark>(.*?)</mark>", _entry(page, speech))
    # "They met on a great battle-field of that war" and "The war tested the nation".
    assert marks == [
        "Now we are engaged in a great civil war, testing whether that nation can long endure.",
        "We are met on a great battle-field of that war.",
    ]
    assert re.findall(r"<mark>(.*?)</mark>", _entry(page, planets)) == ["Mercury is the smallest planet."]


def test_a_claim_sharing_no_word_with_its_source_marks_nothing(reader: User, client_for: Client) -> None:
    thread = thread_create(owner=reader, title="Unrelated")
    (speech,) = _tool(thread, RetrievalHit(text=SPEECH, title="The Gettysburg Address"))
    message_append(thread=thread, type="ai", content=f"Quarterly tax filings rose sharply [1](#{speech}).")
    page = _page(client_for, thread)
    assert "<mark>" not in _entry(page, speech)
    assert "data-passage" not in _hooks(page)[0]


def test_the_header_counts_each_kind_of_problem_in_honest_words_and_the_walk_starts_at_the_first(
    reader: User, client_for: Client
) -> None:
    thread, speech, _ = _two_answers(reader)
    message_append(
        thread=thread,
        type="ai",
        content=f"A guess [x](#knowledge-source-{'0' * 32}) and [y](#knowledge-source-bad) and [z](#{speech}).",
    )
    message_append(thread=thread, type="ai", content="Nothing cited here at all.")
    page = _page(client_for, thread)
    tally = re.search(r"<p class=\"citation-tally\" data-citation-tally>(.*?)</p>", page, re.S)
    assert tally is not None
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", tally.group(1))).strip()
    assert text == (
        "4 source found · 1 no source · 1 malformed · 1 label names another source · 1 answer without citations"
    )
    assert "verified" not in page.lower().replace("unverified", "")
    # The walk's stops, in page order: the mismatched label, the two unverified citations, the
    # answer that cites nothing.
    kinds = re.findall(r'data-issue="([a-z-]+)"', page)
    assert kinds == ["label-mismatch", "unresolved", "malformed", "uncited"]
    walk = re.search(r"<nav class=\"issue-walk\"[^>]*>(.*?)</nav>", page, re.S)
    assert walk is not None
    assert 'data-walk-total="4"' in page
    first = re.search(r'<a class="citation" data-citation="resolved"[^>]* id="([^"]+)"[^>]*data-issue=', page)
    assert first is not None
    assert f'href="#{first.group(1)}" class="walk-step next-issue" data-walk="next"' in walk.group(1)
    assert "4 issues to review" in walk.group(1)


def test_local_evidence_opens_in_its_document_and_web_evidence_at_its_passage(
    reader: User, client_for: Client
) -> None:
    collection = CollectionFactory.create(name="Speeches & more")
    DocumentFactory.create(
        collection=collection,
        source_key="speech.txt",
        content_hash="h",
        title='The "Gettysburg" Address',
        source_url='https://example.org/speech?a=1&b="2"',
        texts='We are met on a great "battle-field" & more. Then more.',
    )
    BindingFactory.create(name="local", users=[reader])
    thread = thread_create(owner=reader, title="Documents")
    outcome = retrieval_search(
        user=reader, tool="knowledge_search", query="battle-field", thread_id=thread.id
    )
    (handle,) = HANDLE.findall(outcome.content)
    message_append(thread=thread, type="ai", content=f"They met on a battle-field [1](#{handle}).")
    entry = _entry(_page(client_for, thread), handle)

    document = re.search(r'<a data-field="document" href="([^"]+)">Open in document</a>', entry)
    assert document is not None
    path = html_lib.unescape(document.group(1))
    assert path.startswith("/library/passage/?collection=Speeches+%26+more&digest=")
    assert path.endswith("#passage")
    # The link names the thread, its first citation and the sentence closest to its claim.
    assert f"&thread={thread.id}&cite=cite-" in path
    assert "&sentences=0#passage" in path
    response = client_for.get(path.split("#")[0])
    assert response.status_code == 200
    # Only that sentence is marked; the way back leads to the citation.
    assert re.search(
        r'<p class="document-chunk passage" id="passage"[^>]*><mark class="passage-mark">'
        r"We are met on a great &quot;battle-field&quot; &amp; more\.</mark> Then more\.</p>",
        response.content.decode(),
    )
    assert "Back to the citation</a>" in response.content.decode()

    at_passage = re.search(r'<a class="source-at-passage" data-field="url-passage" href="([^"]+)"', entry)
    assert at_passage is not None
    url = html_lib.unescape(at_passage.group(1))
    base, directive = url.split("#:~:text=")
    assert base == 'https://example.org/speech?a=1&b="2"'
    assert unquote(directive) == 'We are met on a great "battle-field" &'  # its opening words
    assert "&" not in directive
    assert '"' not in directive
    assert "-" not in directive


def test_evidence_from_elsewhere_has_no_document_link(reader: User, client_for: Client) -> None:
    thread = thread_create(owner=reader, title="Elsewhere")
    (ragflow,) = _tool(
        thread, RetrievalHit(text=SPEECH, title="speech.pdf", dataset_name="Speeches"), provider="ragflow"
    )
    message_append(thread=thread, type="ai", content=f"A war [1](#{ragflow}).")
    assert 'data-field="document"' not in _page(client_for, thread)


def test_hostile_titles_are_text_in_references_and_the_panel(reader: User, client_for: Client) -> None:
    thread = thread_create(owner=reader, title="Hostile")
    title = '<img src=x onerror="alert(1)"> "Guide" & co'
    (handle,) = _tool(
        thread, RetrievalHit(text="Step one <script>alert(2)</script>.", title=title, dataset_name="<b>x</b>")
    )
    message_append(thread=thread, type="ai", content=f'Step one [<svg onload=prompt(3)> "zzz"](#{handle}).')
    page = _page(client_for, thread)
    # The answer's label lives only in a quoted attribute, whole, as the dialog's text.
    assert _attribute_values(page, "data-label") == ['<svg onload=prompt(3)> "zzz"']
    markup = re.sub(r"data-label='[^']*'|data-label=\"[^\"]*\"", "", page)
    assert "<img" not in markup
    assert "<svg" not in markup
    assert "<script>alert" not in markup
    assert "<b>x</b>" not in markup
    escaped = html_lib.escape(title)
    assert f'<span class="citation-number">[1]</span> {escaped}</a>' in page
    assert f'<span class="visually-hidden"> {html_lib.escape(title, quote=False)}</span>' in page


def test_tool_summaries_count_what_the_budget_kept_and_name_an_empty_search(
    reader: User, client_for: Client
) -> None:
    thread = summaries_thread(reader, empty_query='zebra "crossings" & <b>')
    kept = thread.messages.filter(type="tool").order_by("seq").first()
    assert kept is not None
    shown = len(HANDLE.findall(kept.content))
    assert 0 < shown < 8
    page = _page(client_for, thread)
    summaries = re.findall(r'<span class="tool-summary" data-tool-summary>(.*?)</span>', page)
    assert summaries == [
        f"Knowledge search results from local ({shown} of 8 shown).",
        "Nothing found for “zebra &quot;crossings&quot; &amp; &lt;b&gt;” (Knowledge search, local).",
    ]
    notice = re.search(r'<span class="tool-notice" data-tool-notice>(.*?)</span>', page)
    assert notice is not None
    assert notice.group(1).startswith(f"{8 - shown} more results omitted to fit the output budget.")
    # The notice sits in the summary line: seen while the message is folded.
    summary = re.search(r"<summary>(.*?)</summary>", page, re.S)
    assert summary is not None
    assert "data-tool-notice" in summary.group(1)


def test_the_view_records_the_query_redacted(reader: User) -> None:
    binding = BindingFactory.create(name="local", users=[reader])
    assert binding.pk
    thread = thread_create(owner=reader, title="Q")
    outcome = retrieval_search(
        user=reader, tool="knowledge_search", query="nothing here at all", thread_id=thread.id
    )
    assert outcome.message_id is not None
    message = thread.messages.get(pk=outcome.message_id)
    assert message.tool_view is not None
    assert message.tool_view["query"] == "nothing here at all"
    assert json.dumps(message.tool_view).count("nothing here at all") == 1
