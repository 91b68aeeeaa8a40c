"""Open in document: a cited local passage shown, marked, in the extracted text of its document.

The link names the passage by collection and digest (evidence carries no document id);
only a reader whose local bindings serve the collection sees the page, everyone else
gets the same 404, and everything the document holds is escaped.
"""

from __future__ import annotations

import hashlib
import html
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.library.models import Chunk, Collection, Document
from knowledgeweb.library.passages import passage_path, text_digest
from knowledgeweb.library.selectors import PASSAGE_WINDOW, passage_locate
from knowledgeweb.library.services import collection_get_or_create, file_ingest
from tests.factories import BindingFactory, CollectionFactory, DocumentFactory, logged_in
from tests.pdf_writer import pdf_bytes

pytestmark = pytest.mark.django_db

MARK = re.compile(
    r'<p class="document-chunk passage" id="passage" tabindex="-1" data-passage-chunk>'
    r'<mark class="passage-mark">(.*?)</mark></p>',
    re.S,
)
CHUNK = re.compile(r'<p class="document-chunk[^"]*"[^>]*>(.*?)</p>', re.S)
GAP = re.compile(r'data-document-gap="(\w+)"')


def _document(
    collection: Collection, title: str, texts: list[str], *, source_url: str = "", key: str | None = None
) -> Document:
    return DocumentFactory.create(
        collection=collection, title=title, texts=texts, source_url=source_url, source_key=key or title
    )


def _local(name: str, user: User, *collections: Collection) -> None:
    BindingFactory.create(name=name, users=[user], collections=collections)


def _get(client: Client, collection: str, excerpt: str) -> Any:
    path = passage_path(collection_name=collection, excerpt=excerpt)
    assert path.endswith("#passage")
    return client.get(path.removesuffix("#passage"))


def _gaps(page: str) -> list[str]:
    """Which notes say that text before or after the window is not shown."""
    return GAP.findall(page)


def _marked(page: str) -> list[str]:
    return [html.unescape(text) for text in MARK.findall(page)]


@pytest.fixture
def hr() -> Collection:
    collection = collection_get_or_create(name="hr")
    _document(
        collection,
        "Salaries",
        [
            "Intro paragraph.",
            "Quarterly salary bands\nfor every engineer.\n\nSecond paragraph.",
            "Closing words.",
        ],
        source_url="https://intranet.example.test/salaries#bands",
    )
    return collection


@pytest.fixture
def public() -> Collection:
    return CollectionFactory.create(
        name="public", documents={"Handbook": "The engineer handbook explains onboarding."}
    )


PASSAGE = "Quarterly salary bands\nfor every engineer.\n\nSecond paragraph."


def test_the_reader_sees_the_passage_marked_in_its_document(user: User, hr: Collection) -> None:
    _local("alice-hr", user, hr)

    response = _get(logged_in(user), "hr", PASSAGE)

    assert response.status_code == 200
    page = response.content.decode()
    assert _marked(page) == [PASSAGE]
    assert page.count('id="passage"') == 1
    # The text around it, in document order, each chunk with its line breaks as stored.
    assert [html.unescape(t) for t in CHUNK.findall(page)] == [
        "Intro paragraph.",
        f'<mark class="passage-mark">{PASSAGE}</mark>',
        "Closing words.",
    ]
    assert '<h1 id="document-title">Salaries</h1>' in page
    assert "<dd>hr</dd>" in page
    assert (
        '<a href="https://intranet.example.test/salaries#bands" rel="noopener noreferrer" '
        'data-document-link="source">' in page
    )
    # The original, opened at the passage's opening words (its first line, up to the sentence end).
    assert (
        'href="https://intranet.example.test/salaries#bands:~:text=Quarterly%20salary%20bands" '
        'rel="noopener noreferrer"' in page
    )
    assert 'href="/" data-action="back"' in page
    # A text without pages and wholly shown: no page row, no note about hidden text.
    assert 'data-document-row="pages"' not in page
    assert _gaps(page) == []


def test_a_scope_all_binding_opens_every_collection(user: User, hr: Collection, public: Collection) -> None:
    _local("alice-all", user)

    response = _get(logged_in(user), "public", "The engineer handbook explains onboarding.")

    assert response.status_code == 200
    assert _marked(response.content.decode()) == ["The engineer handbook explains onboarding."]


def _not_found(client: Client, **query: str) -> str:
    response = client.get("/library/passage/", query)
    assert response.status_code == 404
    # The sign-out form's CSRF token is masked afresh on every page; nothing else may differ.
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", response.content.decode())


def test_every_refusal_is_the_same_404(
    user: User, other_user: User, hr: Collection, public: Collection
) -> None:
    _local("alice-public", user, public)
    _local("bob-hr", other_user, hr)
    client = logged_in(user)
    good = text_digest(PASSAGE)
    assert _get(logged_in(other_user), "hr", PASSAGE).status_code == 200

    refusals = [
        # A collection alice's bindings do not serve, though the passage is there.
        _not_found(client, collection="hr", digest=good),
        # A passage that is not in the collection named (it is in another).
        _not_found(client, collection="public", digest=good),
        _not_found(client, collection="nowhere", digest=good),
        _not_found(client, collection="public", digest=text_digest("Not stored anywhere.")),
        _not_found(client, collection="public", digest=good.upper()),
        _not_found(client, collection="public", digest=good[:-1]),
        _not_found(client, collection="public", digest=good + "0"),
        _not_found(client, collection="public", digest="z" * 64),
        _not_found(client, collection="public", digest=""),
        _not_found(client, collection="public"),
        _not_found(client, digest=good),
        _not_found(client, collection="hr\x00", digest=good),
        _not_found(client, collection="h" * 5000, digest=good),
    ]

    assert len(set(refusals)) == 1
    assert "Quarterly" not in refusals[0]
    assert "Not found" in refusals[0]


def test_a_reader_without_a_local_binding_gets_404_and_a_visitor_the_sign_in(
    user: User, other_user: User, hr: Collection
) -> None:
    _local("alice-hr", user, hr)
    assert _get(logged_in(other_user), "hr", PASSAGE).status_code == 404

    response = _get(Client(), "hr", PASSAGE)

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=/library/passage/")


def test_the_page_is_read_only(user: User, hr: Collection) -> None:
    _local("alice-hr", user, hr)
    path = passage_path(collection_name="hr", excerpt=PASSAGE).removesuffix("#passage")

    assert logged_in(user).post(path).status_code == 405


def test_an_identical_chunk_in_two_documents_opens_the_lowest_document_id(user: User, hr: Collection) -> None:
    _local("alice-hr", user, hr)
    first = _document(hr, "Copy A", ["Shared words.", "Only in A."], key="a")
    _document(hr, "Copy B", ["Before in B.", "Shared words."], key="b")

    located = passage_locate(collection_name="hr", excerpt="Shared words.")

    assert located is not None
    assert (located.document_id, located.ordinal) == (first.pk, 1)
    page = _get(logged_in(user), "hr", "Shared words.").content.decode()
    assert '<h1 id="document-title">Copy A</h1>' in page
    assert "Only in A." in page
    assert "Before in B." not in page


def test_passage_locate_finds_only_the_exact_text_in_the_named_collection(hr: Collection) -> None:
    assert passage_locate(collection_name="hr", excerpt="Intro paragraph.") == Chunk.objects.get(
        text="Intro paragraph."
    )
    assert passage_locate(collection_name="hr", excerpt="Intro paragraph") is None
    assert passage_locate(collection_name="hr", excerpt="Intro paragraph. […]") is None
    assert passage_locate(collection_name="public", excerpt="Intro paragraph.") is None
    assert passage_locate(collection_name="hr\x00", excerpt="Intro paragraph.") is None
    # Not encodable, so stored nowhere: no match, and no error from the driver.
    assert passage_locate(collection_name="hr\ud800", excerpt="Intro \ud800") is None


def test_a_long_text_shows_a_window_around_the_passage_and_says_what_is_hidden(
    user: User, hr: Collection
) -> None:
    _local("alice-hr", user, hr)
    _document(hr, "Long", [f"Paragraph {n}." for n in range(1, 101)])
    client = logged_in(user)

    page = _get(client, "hr", "Paragraph 50.").content.decode()

    shown = [html.unescape(t) for t in CHUNK.findall(page)]
    first, last = 50 - PASSAGE_WINDOW, 50 + PASSAGE_WINDOW
    assert len(shown) == 2 * PASSAGE_WINDOW + 1
    assert shown[0] == f"Paragraph {first}."
    assert shown[-1] == f"Paragraph {last}."
    assert _marked(page) == ["Paragraph 50."]
    assert _gaps(page) == ["earlier", "later"]

    start = _get(client, "hr", "Paragraph 1.").content.decode()
    assert len(CHUNK.findall(start)) == PASSAGE_WINDOW + 1
    assert _gaps(start) == ["later"]

    end = _get(client, "hr", "Paragraph 100.").content.decode()
    assert len(CHUNK.findall(end)) == PASSAGE_WINDOW + 1
    assert _gaps(end) == ["earlier"]


def _pdf(tmp_path: Path, pages: int) -> Document:
    path = tmp_path / "book.pdf"
    path.write_bytes(
        pdf_bytes([[f"Page {n} opens here.", "", f"Page {n} closes here."] for n in range(1, pages + 1)])
    )
    return file_ingest(collection=collection_get_or_create(name="books"), path=path, key="book.pdf").document


def _sections(page: str) -> list[int]:
    return [int(n) for n in re.findall(r'data-page-number="(\d+)"', page)]


def test_a_pdf_passage_is_shown_with_its_page_and_the_pages_either_side(user: User, tmp_path: Path) -> None:
    document = _pdf(tmp_path, 5)
    _local("alice-books", user, document.collection)
    cited = document.chunks.get(page=3)
    assert cited.text == "Page 3 opens here.\n\nPage 3 closes here."

    response = _get(logged_in(user), "books", cited.text)

    page = response.content.decode()
    assert response.status_code == 200
    assert _sections(page) == [2, 3, 4]
    assert _marked(page) == [cited.text]
    assert [html.unescape(t) for t in CHUNK.findall(page) if "<mark" not in t] == [
        "Page 2 opens here.\n\nPage 2 closes here.",
        "Page 4 opens here.\n\nPage 4 closes here.",
    ]
    assert "Page 1 opens" not in page
    assert "Page 5 opens" not in page
    assert "<dd>2, 3, 4 (the passage is on page 3)</dd>" in page
    assert _gaps(page) == ["earlier", "later"]


def test_a_passage_on_the_first_pdf_page_has_only_a_following_neighbour(user: User, tmp_path: Path) -> None:
    document = _pdf(tmp_path, 3)
    _local("alice-books", user, document.collection)
    cited = document.chunks.get(page=1)

    page = _get(logged_in(user), "books", cited.text).content.decode()

    assert _sections(page) == [1, 2]
    assert _gaps(page) == ["later"]


HOSTILE = '<script>alert("x")</script> "><img src=x onerror=alert(1)>'


def test_hostile_document_text_title_and_collection_are_escaped(user: User) -> None:
    collection = collection_get_or_create(name='"><img src=x onerror=alert(2)>')
    _document(
        collection, '<script>alert("title")</script>', ["Before.", HOSTILE, "</mark></p><script>x()</script>"]
    )
    _local("alice", user, collection)

    response = _get(logged_in(user), collection.name, HOSTILE)

    page = response.content.decode()
    assert response.status_code == 200
    assert _marked(page) == [HOSTILE]
    assert "<script>" not in page.split("</head>", 1)[1]
    assert "<img" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert page.count("</mark>") == 1


def test_ingest_writes_the_digest_of_every_chunk(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    # Paragraphs long enough that each is a chunk of its own.
    second = "Second paragraph, é and 字. " * 20
    path.write_text(f"{'First paragraph. ' * 30}\n\n{second}\n", encoding="utf-8")
    collection = collection_get_or_create(name="notes")

    document = file_ingest(collection=collection, path=path, key="notes.txt").document
    path.write_text(f"{'Changed paragraph. ' * 30}\n\n{second}\n", encoding="utf-8")
    file_ingest(collection=collection, path=path, key="notes.txt")

    rows = list(document.chunks.order_by("ordinal").values_list("text", "text_digest"))
    assert [text for text, _ in rows] == [("Changed paragraph. " * 30).strip(), second.strip()]
    assert [digest for _, digest in rows] == [hashlib.sha256(text.encode()).hexdigest() for text, _ in rows]


def test_passage_path_names_the_collection_and_digest() -> None:
    assert passage_path(collection_name="HR & pay", excerpt="abc") == (
        "/library/passage/?collection=HR+%26+pay&digest="
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad#passage"
    )
    # Any string has a digest and a link, even one no chunk can hold.
    assert text_digest("lone \ud800") != text_digest("lone ")
    assert passage_path(collection_name="x\udc00", excerpt="\ud800").endswith("#passage")


def _cited_thread(user: User) -> tuple[Any, Any]:
    from knowledgeweb.threads.services import message_append, thread_create

    thread = thread_create(owner=user, title="Salary question")
    message_append(thread=thread, type="human", content="Bands?")
    first = message_append(thread=thread, type="ai", content="No idea.")
    second = message_append(thread=thread, type="ai", content="Bands exist.")
    assert first.seq < second.seq
    return thread, second


def test_only_the_sentences_named_by_the_link_are_marked_and_the_way_back_names_the_answer(
    user: User, hr: Collection
) -> None:
    _local("alice-hr", user, hr)
    thread, answer = _cited_thread(user)
    path = passage_path(collection_name="hr", excerpt=PASSAGE).removesuffix("#passage")
    anchor = f"cite-{answer.id.hex}-1"
    page = logged_in(user).get(f"{path}&thread={thread.id}&cite={anchor}&sentences=1").content.decode()
    chunk = re.search(r'<p class="document-chunk passage" id="passage"[^>]*>(.*?)</p>', page, re.S)
    assert chunk is not None
    # Sentence 0 is "Quarterly salary bands\nfor every engineer.", 1 is "Second paragraph.".
    assert re.findall(r'<mark class="passage-mark">(.*?)</mark>', chunk.group(1), re.S) == [
        "Second paragraph."
    ]
    assert html.unescape(re.sub(r"<[^>]+>", "", chunk.group(1))) == PASSAGE
    line = re.search(r'<p class="document-citing" data-document-citing>(.*?)</p>', page, re.S)
    assert line is not None
    assert "Cited in “Salary question”, answer 2" in line.group(1)
    assert (
        f'href="/threads/{thread.id}/#{anchor}" data-action="back-to-citation">Back to the citation</a>'
        in (line.group(1))
    )
    # The title sits in the sticky bar with the way back.
    assert re.search(
        r'<div class="document-bar" data-document-bar>\s*<h1 id="document-title">Salaries</h1>', page
    )


def test_a_thread_or_answer_the_reader_may_not_see_answers_the_same_404(
    user: User, other_user: User, hr: Collection
) -> None:
    _local("alice-hr", user, hr)
    _local("bob-hr", other_user, hr)
    mine, answer = _cited_thread(user)
    theirs, their_answer = _cited_thread(other_user)
    path = passage_path(collection_name="hr", excerpt=PASSAGE).removesuffix("#passage")
    client = logged_in(user)
    refused = [
        f"{path}&thread={theirs.id}&cite=cite-{their_answer.id.hex}-1",  # another reader's thread
        f"{path}&thread={mine.id}&cite=cite-{their_answer.id.hex}-1",  # an answer not in my thread
        f"{path}&thread={mine.id}&cite=cite-{'0' * 32}-1",  # no such answer
        f"{path}&thread={mine.id}&cite=<script>",  # not an anchor
        f"{path}&thread=not-a-uuid&cite=cite-{answer.id.hex}-1",
        f"{path}&cite=cite-{answer.id.hex}-1",  # no thread
    ]
    for url in refused:
        response = client.get(url)
        assert response.status_code == 404, url
        assert "Salary question" not in response.content.decode()
    ok = client.get(f"{path}&thread={mine.id}&cite=cite-{answer.id.hex}-1")
    assert ok.status_code == 200
