"""A windowed thread page (issue 25): windows fixed at write, read in a fixed number of queries,
decoding only what the page sends; sources and the walk across windows; hits on demand."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import JSONField, Max
from django.test import Client
from django.test.utils import CaptureQueriesContext

from knowledgeweb.knowledge import RetrievalHit
from knowledgeweb.review.services import verdict_record
from knowledgeweb.review.window_verdicts import window_verdicts
from knowledgeweb.threads.models import MessageRender, StoredPage, Thread, ThreadCitation, ThreadSource
from knowledgeweb.threads.services import message_append, thread_create
from knowledgeweb.threads.services.renders import thread_rerender
from knowledgeweb.threads.windows import WINDOW_BYTES, WINDOW_MESSAGES
from knowledgeweb.web.rendering import review as review_rendering
from tests.long_threads import NOWHERE, long_thread
from tests.review_queues import queue_for
from tests.searches import hit_handles, record_search

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner() -> User:
    return User.objects.create_user("owner", password="pw-owner-1")


@pytest.fixture
def client(owner: User) -> Client:
    client = Client()
    client.force_login(owner)
    return client


def _seqs(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<li class="message[^"]*"[^>]*data-seq="(\d+)"', html)] + [
        int(n) for n in re.findall(r'data-seq="(\d+)" id="turn-', html)
    ]


def _windows(thread: Thread) -> dict[int, int]:
    """The number of messages in each window."""
    rows = MessageRender.objects.filter(thread=thread).values_list("window", flat=True)
    return dict(sorted(Counter(rows).items()))


@pytest.fixture
def decoded() -> Iterator[Counter[str]]:
    """Every JSON field value decoded from the database, counted by model and field."""
    counts: Counter[str] = Counter()
    original = JSONField.from_db_value

    def counting(self: JSONField, value: Any, expression: Any, connection: Any) -> Any:
        if value is not None:
            # An annotation's output field belongs to no model: counted under the expression.
            model = getattr(self, "model", None)
            counts[f"{model.__name__}.{self.name}" if model else "expression"] += 1
        return original(self, value, expression, connection)

    JSONField.from_db_value = counting  # type: ignore[method-assign]
    try:
        yield counts
    finally:
        JSONField.from_db_value = original  # type: ignore[method-assign]


def test_windows_are_cut_by_count_at_write_and_the_page_opens_on_the_latest(
    owner: User, client: Client
) -> None:
    thread, _ = long_thread(owner, 60)  # 240 messages

    assert _windows(thread) == {1: WINDOW_MESSAGES, 2: WINDOW_MESSAGES, 3: 40}
    latest = client.get(f"/threads/{thread.id}/").content.decode()
    assert min(_seqs(latest)) == 201
    assert 'data-earlier-turns data-window-target="2"' in latest
    assert 'href="?window=2"' in latest
    first = client.get(f"/threads/{thread.id}/?window=1").content.decode()
    assert min(_seqs(first)) == 1
    assert max(_seqs(first)) == 100
    assert "data-earlier-turns" not in first
    assert 'href="?window=2" data-later-turns' in first
    # Turns and answers go on numbering from the windows before.
    assert '<span class="turn-label">Question 51</span>' in latest
    assert "Sources of answer 51" in latest


@pytest.mark.parametrize("raw", ["0", "4", "x", "-1", "1.5", "9" * 12])
def test_a_window_past_either_end_or_not_a_number_is_not_found(owner: User, client: Client, raw: str) -> None:
    thread, _ = long_thread(owner, 60)

    assert client.get(f"/threads/{thread.id}/?window={raw}").status_code == 404


def test_a_new_message_joins_the_last_window_and_opens_the_next_when_it_is_full(owner: User) -> None:
    thread, _ = long_thread(owner, 25)  # exactly one full window
    assert _windows(thread) == {1: WINDOW_MESSAGES}

    message_append(thread=thread, type="human", content="One more?")
    message_append(thread=thread, type="ai", content="One more answer.")

    assert _windows(thread) == {1: WINDOW_MESSAGES, 2: 2}


def test_windows_are_cut_by_what_the_page_sends_and_a_first_paint_stays_under_a_megabyte(
    owner: User, client: Client
) -> None:
    thread = thread_create(owner=owner, title="Wordy")
    for n in range(30):
        message_append(thread=thread, type="human", content=f"{n} " + "long words " * 3_600)  # ~40 kB

    windows = _windows(thread)
    assert len(windows) > 1
    assert max(windows.values()) < WINDOW_MESSAGES
    for number in windows:
        sent = MessageRender.objects.filter(thread=thread, window=number).values_list("html", flat=True)
        assert sum(len(html) for html in sent) <= WINDOW_BYTES
        page = client.get(f"/threads/{thread.id}/?window={number}")
        assert page.status_code == 200
        assert len(page.content) < 1_000_000


def test_a_view_makes_the_same_queries_and_decodes_the_same_json_at_300_and_2000_messages(
    owner: User, client: Client, decoded: Counter[str]
) -> None:
    short, _ = long_thread(owner, 75, title="Short")  # 300 messages
    long, _ = long_thread(owner, 500, title="Long")  # 2,000 messages

    def view(url: str) -> tuple[int, dict[str, int], int]:
        decoded.clear()
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        assert response.status_code == 200
        return len(queries), dict(decoded), len(response.content)

    # The last window (both full, of 100 messages) is read as stored: one row, its small JSON.
    latest = [view(f"/threads/{thread.id}/") for thread in (short, long)]
    assert latest[0][0] == latest[1][0]
    # (Its meta is decoded by converters a prepared query may have bound before this test
    # counted them: nothing else is decoded, whichever way.)
    assert set(latest[0][1]) <= {"StoredPage.meta"}
    assert set(latest[1][1]) <= {"StoredPage.meta"}
    # An earlier window (after the first, whose source every later window cites) is assembled
    # from the window's renders: the same JSON decoded at both lengths, of its messages only.
    earlier = [view(f"/threads/{thread.id}/?window={_last(thread) - 1}") for thread in (short, long)]
    assert earlier[0][0] == earlier[1][0]
    assert earlier[0][1] == earlier[1][1]
    assert earlier[1][1]["MessageRender.citations"] == WINDOW_MESSAGES
    for unsent in (
        "MessageRender.sources",
        "MessageRender.entries",
        "MessageRender.export",
        "Message.artifact",
    ):
        assert earlier[1][1].get(unsent, 0) == 0
    assert max(size for _, _, size in latest + earlier) < 1_000_000


def _last(thread: Thread) -> int:
    return MessageRender.objects.filter(thread=thread).aggregate(last=Max("window"))["last"]


def test_the_read_path_decodes_no_json_of_a_message_it_does_not_send(
    owner: User, client: Client, decoded: Counter[str]
) -> None:
    thread, _ = long_thread(owner, 60)  # windows of 100, 100 and 40 messages
    # A page stored by an older build of the page assembly is not served: the window is
    # assembled from its renders.
    StoredPage.objects.filter(thread=thread).update(assembly="an older build")
    decoded.clear()

    client.get(f"/threads/{thread.id}/")

    # The last window's 40 messages: their citations, calls and parts; nothing of the other 200.
    assert decoded["MessageRender.citations"] == 40
    assert decoded["Message.tool_calls"] == 40
    assert decoded["Message.parts"] == 40
    # The panel's sources: the window's 10 searches' and the first window's source it cites.
    assert decoded["ThreadSource.entry"] == 11
    # Their evidence, read through an annotation for the sources the window names only (all 11).
    assert decoded.get("ThreadSource.evidence", 0) == 0
    assert decoded["expression"] == 11
    assert decoded.get("MessageRender.entries", 0) == 0
    assert decoded.get("MessageRender.sources", 0) == 0


def test_a_citation_of_a_source_retrieved_in_an_earlier_window_finds_it_in_the_panel(
    owner: User, client: Client
) -> None:
    thread, first = long_thread(owner, 60)
    place = ThreadSource.objects.get(thread=thread, handle=first)
    assert place.window == 1

    page = client.get(f"/threads/{thread.id}/").content.decode()

    assert f'href="#{first}"' in page
    panel = page.split("data-sources-panel", 1)[1]
    assert f'id="{first}"' in panel
    assert "[1]" in panel  # the thread's number for it, fixed at write
    # Its backlinks name the answers of this window that cite it.
    assert "answer 60" in panel


def _elsewhere(page: str, handle: str) -> list[tuple[str, str]]:
    """The links of ``handle``'s panel entry to claims of other windows: (href, words)."""
    entry = page.split(f'id="{handle}"', 1)[1].split("</li>", 1)[0]
    found = re.search(r"data-backlinks-elsewhere>(.*?)</p>", entry, re.S)
    return re.findall(r'<a href="([^"]+)"[^>]*>([^<]+)</a>', found.group(1)) if found else []


def test_the_panel_links_the_claims_of_other_windows_citing_a_source(owner: User, client: Client) -> None:
    """Every answer cites the thread's first source: each window's entry for it links the first
    claim of every other window citing it, by that window's URL (issue 25: backlinks across
    windows), and an answer appended later counts where it lands."""
    thread, first = long_thread(owner, 60)  # windows of 100, 100 and 40 messages: answers 1-25, 26-50, 51-60
    anchors = dict(ThreadCitation.objects.filter(thread=thread, handle=first).values_list("window", "anchor"))
    assert sorted(anchors) == [1, 2, 3]
    # The first claim of window 1 is answer 1's first link (its own search's source is the first).
    assert anchors[1].endswith("-1")

    last = client.get(f"/threads/{thread.id}/").content.decode()
    assert _elsewhere(last, first) == [
        (f"?window=1#{anchors[1]}", "answer 1 (window 1, 26 claims)"),
        (f"?window=2#{anchors[2]}", "answer 26 (window 2, 25 claims)"),
    ]
    middle = client.get(f"/threads/{thread.id}/?window=2").content.decode()
    assert [words for _, words in _elsewhere(middle, first)] == [
        "answer 1 (window 1, 26 claims)",
        "answer 51 (window 3, 10 claims)",
    ]
    # A source cited in one window only links nowhere else.
    only_here = ThreadCitation.objects.filter(thread=thread, window=3).exclude(handle=first).first()
    assert only_here is not None
    assert _elsewhere(last, only_here.handle) == []
    # Each link lands on the claim: that window's page holds the anchor.
    assert f'id="{anchors[1]}"' in client.get(f"/threads/{thread.id}/?window=1").content.decode()

    message_append(thread=thread, type="ai", content=f"Once more [doc 0](#{first}).")
    assert ThreadCitation.objects.get(thread=thread, handle=first, window=3).count == 11


def test_the_walk_goes_on_in_the_nearest_windows_holding_a_problem(owner: User, client: Client) -> None:
    thread, _ = long_thread(owner, 60)  # a citation with no source in the first and the last window

    last = client.get(f"/threads/{thread.id}/").content.decode()
    middle = client.get(f"/threads/{thread.id}/?window=2").content.decode()
    first = client.get(f"/threads/{thread.id}/?window=1").content.decode()

    assert 'data-walk-before="?window=1#walk-last"' in last
    assert "data-walk-after" not in last
    assert 'data-walk-before="?window=1#walk-last"' in middle
    assert 'data-walk-after="?window=3#walk-first"' in middle
    assert 'data-walk-after="?window=3#walk-first"' in first
    assert f'data-reason-handle="{NOWHERE}"' in first


def test_a_tool_message_sends_its_summary_and_its_hits_load_from_the_fragment_route(
    owner: User, client: Client
) -> None:
    thread = thread_create(owner=owner, title="Hits")
    tool, formatted = record_search(
        thread, RetrievalHit(text="Fact number 0 about the subject.", title="a.md")
    )
    (handle,) = hit_handles(formatted)
    message_append(thread=thread, type="ai", content=f"Per [a](#{handle}).")

    page = client.get(f"/threads/{thread.id}/").content.decode()
    url = f"/threads/{thread.id}/messages/{tool.id}/hits/"
    assert f'data-tool-hits="{url}"' in page
    assert 'class="hit-head"' not in page

    hits = client.get(url)
    assert hits.status_code == 200
    body = hits.content.decode()
    assert 'class="hit-head"' in body
    assert "Fact number 0 about the subject." in body
    assert '<span class="hit-number citation-number">[1]</span>' in body  # the thread's number

    other = User.objects.create_user("other", password="pw-other-1")
    stranger = Client()
    stranger.force_login(other)
    assert stranger.get(url).status_code == 404
    answer = thread.messages.get(seq=2)
    assert client.get(f"/threads/{thread.id}/messages/{answer.id}/hits/").status_code == 404


def test_a_re_render_keeps_every_window_and_every_place(owner: User) -> None:
    thread, _ = long_thread(owner, 60)
    windows = dict(MessageRender.objects.filter(thread=thread).values_list("message_id", "window"))
    places = set(ThreadSource.objects.filter(thread=thread).values_list("handle", "kind", "window", "seq"))

    cited = set(
        ThreadCitation.objects.filter(thread=thread).values_list("handle", "window", "count", "anchor")
    )

    thread_rerender(thread=thread, force=True)

    assert dict(MessageRender.objects.filter(thread=thread).values_list("message_id", "window")) == windows
    assert (
        set(ThreadCitation.objects.filter(thread=thread).values_list("handle", "window", "count", "anchor"))
        == cited
    )
    assert (
        set(ThreadSource.objects.filter(thread=thread).values_list("handle", "kind", "window", "seq"))
        == places
    )
    assert MessageRender.objects.filter(thread=thread).aggregate(last=Max("window"))["last"] == 3


def test_a_window_lays_only_its_own_verdicts_over_itself_in_the_same_queries(
    owner: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Verdicts are read for the window's messages only: a page with a judged thread costs what
    it shows, whichever window holds the verdicts (issues 25 and 26)."""
    thread, _ = long_thread(owner, 50)  # 200 messages: windows 1 and 2
    agent_answers = list(thread.messages.filter(type="ai").order_by("seq"))
    windows = dict(MessageRender.objects.filter(thread=thread).values_list("message_id", "window"))
    reviewer = User.objects.create_user("reviewer", password="pw-reviewer-1")
    queue_for([owner], [reviewer])
    for answer in agent_answers:
        verdict_record(
            reviewer=reviewer,
            thread_id=thread.id,
            message_id=answer.id,
            kind="answer",
            position=0,
            value="acceptable",
        )
    reader = Client()
    reader.force_login(reviewer)
    read: list[int] = []  # the verdicts each page read

    def counted(**kwargs: Any) -> list[Any]:
        verdicts = window_verdicts(**kwargs)
        read.append(len(verdicts))
        return verdicts

    monkeypatch.setattr(review_rendering, "window_verdicts", counted)
    # Both windows assembled per view (the last one's stored page set aside, then compared).
    built_by = StoredPage.objects.get(thread=thread).assembly
    StoredPage.objects.filter(thread=thread).update(assembly="an older build")

    chips, counts = {}, {}
    for number in (1, 2):
        with CaptureQueriesContext(connection) as queries:
            response = reader.get(f"/threads/{thread.id}/?window={number}")
        assert response.status_code == 200
        counts[number] = len(queries)
        html = response.content.decode()
        chips[number] = set(re.findall(r'data-verdict-chips="answer-([0-9a-f]{32})"', html))
    expected = {number: {a.id.hex for a in agent_answers if windows[a.id] == number} for number in (1, 2)}
    assert all(expected.values())  # both windows hold judged answers
    assert chips == expected
    assert read == [len(expected[1]), len(expected[2])]
    assert counts[1] == counts[2]
    # The stored last window: the same chips, read in fewer queries.
    StoredPage.objects.filter(thread=thread).update(assembly=built_by)
    with CaptureQueriesContext(connection) as queries:
        stored = reader.get(f"/threads/{thread.id}/").content.decode()
    assert set(re.findall(r'data-verdict-chips="answer-([0-9a-f]{32})"', stored)) == expected[2]
    assert len(queries) < counts[2]
    assert read[-1] == len(expected[2])
