"""The thread list, on the page and in the API: one explicit order, pages, search, stored tallies.

Runs on SQLite by default and on PostgreSQL when ``DATABASE_URL`` says so
(``make pytest-postgres``); every test here uses more than one page of threads
where order matters.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any
from uuid import UUID

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from knowledgeweb.threads.errors import ThreadCursorError
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.selectors import thread_page_for_owner
from knowledgeweb.threads.services import message_append, thread_create
from knowledgeweb.web.views import THREADS_PER_PAGE

LIST = "/api/threads"


def _threads(owner: User, count: int, *, ties_every: int = 7) -> list[Thread]:
    """``count`` threads with known update times, newest first as the list must show them.

    Every ``ties_every``-th thread shares its update time with the one before, so the
    id tie-break decides their order; creation order is shuffled against update order.
    """
    base = timezone.now() - timedelta(days=30)
    threads = [thread_create(owner=owner, title=f"Thread {n:03d}") for n in range(count)]
    for n, thread in enumerate(threads):
        minutes = (n * 37) % count  # creation order is not update order
        if n % ties_every == 0 and n:
            minutes = ((n - 1) * 37) % count
        stamp = base + timedelta(minutes=minutes)
        Thread.objects.filter(pk=thread.pk).update(updated_at=stamp)
    fresh = {t.pk: t for t in Thread.objects.filter(owner=owner)}
    return sorted(fresh.values(), key=lambda t: (t.updated_at, t.id), reverse=True)


def _page_ids(html: str) -> list[UUID]:
    return [UUID(value) for value in re.findall(r'data-thread-id="([0-9a-f-]{36})"', html)]


@pytest.fixture
def client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_api_pages_through_every_thread_newest_first_with_a_cursor(
    user: User, other_user: User, api_client: Client
) -> None:
    expected = _threads(user, 123)
    thread_create(owner=other_user, title="not yours")

    seen: list[UUID] = []
    cursor = ""
    pages = 0
    while True:
        params: dict[str, Any] = {"limit": 50, "cursor": cursor} if cursor else {"limit": 50}
        response = api_client.get(LIST, params)
        assert response.status_code == 200
        body = response.json()
        seen += [UUID(item["id"]) for item in body]
        pages += 1
        if "X-Next-Cursor" not in response:
            assert "Link" not in response
            break
        cursor = response["X-Next-Cursor"]
        assert response["Link"] == f'</api/threads?limit=50&cursor={cursor}>; rel="next"'
        assert len(body) == 50
    assert pages == 3
    assert seen == [t.id for t in expected]


def test_the_default_api_page_holds_fifty_threads(user: User, api_client: Client) -> None:
    expected = _threads(user, 60)

    response = api_client.get(LIST)

    assert [UUID(item["id"]) for item in response.json()] == [t.id for t in expected[:50]]
    assert "X-Next-Cursor" in response


def test_the_list_query_orders_in_sql(user: User, api_client: Client) -> None:
    _threads(user, 3)

    with CaptureQueriesContext(connection) as queries:
        api_client.get(LIST)

    [listing] = [q["sql"] for q in queries.captured_queries if 'FROM "threads_thread"' in q["sql"]]
    assert re.search(r'ORDER BY "threads_thread"\."updated_at" DESC, "threads_thread"\."id" DESC', listing)
    # Tallies are stored on the thread: the list never reads or counts messages.
    assert "threads_message" not in " ".join(q["sql"] for q in queries.captured_queries)


def test_a_thread_updated_while_paging_moves_to_the_front_without_shifting_later_pages(
    user: User, api_client: Client
) -> None:
    expected = _threads(user, 100)
    first = api_client.get(LIST, {"limit": 50})
    # The oldest thread on page two gets a new message: it is now the newest.
    message_append(thread=expected[-1], type="human", content="one more question")

    second = api_client.get(LIST, {"limit": "50", "cursor": first["X-Next-Cursor"]})

    assert [UUID(i["id"]) for i in second.json()] == [t.id for t in expected[50:99]]
    assert UUID(api_client.get(LIST, {"limit": 1}).json()[0]["id"]) == expected[-1].id


@pytest.mark.parametrize(
    "cursor", ["not-a-cursor", "%%%", "12-XYZ", "12-" + "0" * 31, "1" * 21 + "-" + "0" * 32]
)
def test_a_cursor_not_of_the_issued_form_is_refused_clearly(
    user: User, api_client: Client, cursor: str
) -> None:
    _threads(user, 3)

    response = api_client.get(LIST, {"cursor": cursor})

    assert response.status_code == 422
    assert "cursor" in response.content.decode()
    assert Thread.objects.filter(owner=user).count() == 3


def test_every_cursor_of_the_issued_form_names_a_position(user: User, api_client: Client) -> None:
    expected = _threads(user, 5)

    after_everything = api_client.get(LIST, {"cursor": "9" * 20 + "-" + "f" * 32})
    before_everything = api_client.get(LIST, {"cursor": "0-" + "0" * 32})

    assert [UUID(i["id"]) for i in after_everything.json()] == [t.id for t in expected]
    assert before_everything.json() == []


def test_the_selector_refuses_a_cursor_it_did_not_issue(user: User) -> None:
    with pytest.raises(ThreadCursorError, match=r"^The cursor is not one this API issued"):
        thread_page_for_owner(owner=user, limit=10, cursor="garbage")


@pytest.mark.parametrize("limit", [0, -1, 201, "many"])
def test_a_limit_outside_1_to_200_is_refused(user: User, api_client: Client, limit: Any) -> None:
    response = api_client.get(LIST, {"limit": limit})

    assert response.status_code == 422
    assert "limit" in response.content.decode()


def test_the_api_searches_titles_and_what_was_said_but_not_tool_output(
    user: User, other_user: User, api_client: Client
) -> None:
    by_title = thread_create(owner=user, title="Kingfisher sightings")
    by_question = thread_create(owner=user, title="Birds")
    message_append(thread=by_question, type="human", content="Where do KINGFISHERS nest?")
    by_answer = thread_create(owner=user, title="Rivers")
    message_append(thread=by_answer, type="ai", content="The kingfisher dives.")
    by_tool = thread_create(owner=user, title="Tool only")
    message_append(thread=by_tool, type="tool", name="knowledge_search", content="kingfisher in a hit")
    thread_create(owner=user, title="Herons")
    thread_create(owner=other_user, title="Kingfisher, but not yours")

    found = {UUID(i["id"]) for i in api_client.get(LIST, {"q": "  kingFISHER "}).json()}

    assert found == {by_title.id, by_question.id, by_answer.id}


def test_the_api_reports_the_stored_citation_tallies(user: User, api_client: Client) -> None:
    thread = thread_create(owner=user, title="Tallied")
    Thread.objects.filter(pk=thread.pk).update(
        citations_resolved=7, citations_unresolved=2, citations_malformed=1, message_count=4
    )

    [item] = api_client.get(LIST).json()

    assert (
        item["citations_resolved"],
        item["citations_unresolved"],
        item["citations_malformed"],
        item["message_count"],
    ) == (7, 2, 1, 4)


def test_the_page_shows_fifty_threads_a_page_newest_first_with_links_to_the_others(
    user: User, client: Client
) -> None:
    expected = _threads(user, 123)

    first = client.get("/").content.decode()
    third = client.get("/", {"page": 3}).content.decode()

    assert THREADS_PER_PAGE == 50
    assert _page_ids(first) == [t.id for t in expected[:50]]
    assert _page_ids(third) == [t.id for t in expected[100:]]
    assert 'href="?page=2" rel="next"' in first
    assert re.search(r'href="\?page=3"[^>]*data-page-link="3"', first)
    assert 'aria-current="page" data-page-link="3"' in third
    assert 'rel="prev"' in third
    assert 'rel="next"' not in third
    assert "123 threads, most recently updated first." in first


@pytest.mark.parametrize("page", ["0", "-3", "999", "two", ""])
def test_an_out_of_range_or_malformed_page_number_shows_the_nearest_page(
    user: User, client: Client, page: str
) -> None:
    _threads(user, 60)

    response = client.get("/", {"page": page})

    assert response.status_code == 200
    assert len(_page_ids(response.content.decode())) in (50, 10)


def test_the_page_search_keeps_its_words_in_the_page_links(user: User, client: Client) -> None:
    for n in range(55):
        thread_create(owner=user, title=f"Owl {n}")
    thread_create(owner=user, title="Heron")

    html = client.get("/", {"q": "owl"}).content.decode()

    assert len(_page_ids(html)) == 50
    assert "55 threads match “owl”." in html
    assert 'href="?page=2&amp;q=owl" rel="next"' in html
    assert 'value="owl"' in html
    assert "Heron" not in html


def test_a_search_with_no_match_says_so(user: User, client: Client) -> None:
    thread_create(owner=user, title="Heron")

    html = client.get("/", {"q": "<b>albatross</b>"}).content.decode()

    assert 'data-empty="search"' in html
    assert "&lt;b&gt;albatross&lt;/b&gt;" in html
    assert "<b>albatross</b>" not in html


def test_each_row_shows_its_stored_verdicts_and_last_update(user: User, client: Client) -> None:
    thread = thread_create(owner=user, title="Tallied")
    Thread.objects.filter(pk=thread.pk).update(
        citations_resolved=12,
        citations_unresolved=3,
        citations_malformed=0,
        citations_mismatched=2,
        answers_uncited=1,
    )
    thread.refresh_from_db()

    with CaptureQueriesContext(connection) as queries:
        html = client.get("/").content.decode()

    assert re.search(r'class="verdict verdict-resolved" data-verdict="resolved">12 source found<', html)
    assert re.search(r'class="verdict verdict-unresolved" data-verdict="unresolved">3 no source<', html)
    # A count of zero is neutral: no warning colour.
    assert re.search(r'class="verdict" data-verdict="malformed">0 malformed<', html)
    assert re.search(r'data-verdict="label-mismatch">2 labels name another source<', html)
    assert re.search(r'data-verdict="uncited">1 answer without citations<', html)
    assert "verified" not in html
    assert f'datetime="{thread.updated_at.isoformat()}"' in html
    assert "threads_message" not in " ".join(q["sql"] for q in queries.captured_queries)


def test_the_openapi_schema_documents_paging_search_and_deletion(db: None) -> None:
    schema = Client().get("/api/openapi.json").json()

    listing = schema["paths"]["/api/threads"]["get"]
    params = {p["name"]: p["schema"] for p in listing["parameters"]}
    assert set(params) == {"limit", "cursor", "q"}
    assert (params["limit"]["minimum"], params["limit"]["maximum"], params["limit"]["default"]) == (
        1,
        200,
        50,
    )
    assert "X-Next-Cursor" in listing["description"]
    assert 'rel="next"' in listing["description"]
    assert "204" in schema["paths"]["/api/threads/{thread_id}"]["delete"]["responses"]
    assert "404" in schema["paths"]["/api/threads/{thread_id}"]["delete"]["responses"]


def test_a_search_holding_nul_finds_nothing_instead_of_failing(user: User, api_client: Client) -> None:
    thread_create(owner=user, title="a\u2028b")
    # The API's schema says q holds no NUL (its pattern), and the API keeps to it.
    response = api_client.get(LIST, {"q": "a\x00b"})
    assert response.status_code == 422
    assert response.json()["code"] == "invalid_request"
    assert "q: Value error, must not contain a NUL character" in response.json()["detail"]
    client = Client()
    client.force_login(user)
    assert client.get("/", {"q": "a\x00b"}).status_code == 200


def test_the_search_matches_what_a_reader_sees_never_link_targets_or_citation_labels(
    user: User, client: Client
) -> None:
    cited = thread_create(owner=user, title="Cited")
    message_append(
        thread=cited,
        type="ai",
        content=(
            f"Backups last thirty days [citation:policy](#knowledge-source-{'a' * 32}) and the "
            "[handbook](https://handbook.example/retention) agrees."
        ),
    )
    plain = thread_create(owner=user, title="Plain")
    message_append(thread=plain, type="human", content="Do backups last thirty days?")

    def found(q: str) -> list[str]:
        html = client.get("/", {"q": q}).content.decode()
        return re.findall(r'class="thread-link" href="[^"]+">([^<]+)</a>', html)

    # Hidden markup: a citation's label, an href, a link target's host.
    assert found("citation") == []
    assert found("knowledge-source") == []
    assert found("handbook.example") == []
    assert found("policy") == []
    # What a reader sees: the words, and a link's own label.
    assert sorted(found("thirty days")) == ["Cited", "Plain"]
    assert found("handbook") == ["Cited"]


def test_the_search_shows_a_snippet_around_the_match_and_says_how_many_match(
    user: User, client: Client
) -> None:
    long = thread_create(owner=user, title="Long")
    words = " ".join(f"word{n}" for n in range(60))
    message_append(thread=long, type="ai", content=f"{words} the albatross flies far {words}")
    html = client.get("/", {"q": "ALBATROSS"}).content.decode()
    assert re.search(r"1 thread matches “ALBATROSS”", html)
    (snippet,) = re.findall(r'<p class="thread-snippet" data-snippet>(.*?)</p>', html, re.S)
    assert "<mark>albatross</mark>" in snippet
    assert snippet.startswith("…word")
    assert snippet.endswith("…")
    assert len(re.sub(r"<[^>]+>", "", snippet)) <= 2 * 60 + len("albatross") + 2

    other = thread_create(owner=user, title="Albatross facts")
    message_append(thread=other, type="human", content="Tell me about it.")
    html = client.get("/", {"q": "albatross"}).content.decode()
    assert re.search(r"2 threads match “albatross”", html)
    # A title match needs no snippet: the title is shown.
    assert html.count("data-snippet") == 1
