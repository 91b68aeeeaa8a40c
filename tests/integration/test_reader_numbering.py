"""One numbering, the problem counters and the reasons that say what happened (issue 24).

Through the real services and the real page: numbers are fixed at write and stored per thread,
and the page, the live stream, the citation report and the Markdown export all show the same;
the tool messages' hit lists too. The header and the thread list read stored counters.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.accounts.services import token_create
from knowledgeweb.composer.live import SentenceStream
from knowledgeweb.knowledge import RetrievalHit
from knowledgeweb.knowledge.numbering import number_sources
from knowledgeweb.threads.interchange.export import thread_export
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.selectors import renders_evidence, thread_source_numbers
from knowledgeweb.threads.services import message_append, thread_create
from knowledgeweb.threads.services.renders import thread_rerender
from tests.searches import hit_handles, record_search

pytestmark = pytest.mark.django_db


@pytest.fixture
def client_for(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _page(client: Client, thread: Thread) -> str:
    response = client.get(f"/threads/{thread.id}/")
    assert response.status_code == 200
    return str(response.content.decode())


def _page_at(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200
    return str(response.content.decode())


def _report(user: User, thread: Thread) -> dict[str, Any]:
    _, raw = token_create(user=user, name="report")
    response = Client().get(f"/api/threads/{thread.id}/citations", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert response.status_code == 200
    payload: dict[str, Any] = json.loads(response.content)
    return payload


def test_number_sources_numbers_in_order_of_first_citation_and_keeps_given_numbers() -> None:
    assert number_sources(["b", "a", "b", "c"]) == {"b": 1, "a": 2, "c": 3}
    given = {"x": 1}
    assert number_sources(["a", "x", "a"], given) == {"x": 1, "a": 2}
    assert given == {"x": 1}  # never changed
    assert number_sources([]) == {}


def _generated_thread(user: User, seed: int) -> tuple[Thread, list[str]]:
    """Searches and answers in a random order; answers cite random earlier sources (some twice),
    and now and then a handle no search retrieved."""
    rng = random.Random(seed)
    thread = thread_create(owner=user, title=f"Generated {seed}")
    handles: list[str] = []
    for turn in range(6):
        message_append(thread=thread, type="human", content=f"Question {turn}?")
        if rng.random() < 0.7 or not handles:
            hits = [
                RetrievalHit(text=f"Fact {turn}.{n} about subject {seed}.", title=f"doc-{turn}-{n}.md")
                for n in range(rng.randint(1, 3))
            ]
            _, formatted = record_search(thread, *hits)
            handles.extend(hit_handles(formatted))
        cited = [rng.choice(handles) for _ in range(rng.randint(1, 4))]
        parts = [f"Claim {i} holds [see {i}](#{h})." for i, h in enumerate(cited)]
        if rng.random() < 0.3:
            parts.append(f"A guess [g](#knowledge-source-{'0' * 32}).")
        message_append(thread=thread, type="ai", content=" ".join(parts))
    return thread, handles


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_page_stream_report_and_export_number_every_source_alike(
    user: User, client_for: Client, seed: int
) -> None:
    thread, _ = _generated_thread(user, seed)
    numbers = thread_source_numbers(thread=thread)
    assert sorted(numbers.values()) == list(range(1, len(numbers) + 1))

    # The page: each resolved citation's number is its source's.
    page = _page(client_for, thread)
    shown = re.findall(
        r'<a class="citation" data-citation="resolved" [^>]*href="#([^"]+)"[^>]*>'
        r'<span class="citation-number">\[(\d+)\]</span>',
        page,
    )
    assert shown
    assert all(numbers[h] == int(n) for h, n in shown)

    # The report.
    report = _report(user, thread)
    reported = [
        (c["source"]["handle"], c["number"])
        for m in report["messages"]
        for c in m["citations"]
        if c["state"] == "resolved"
    ]
    assert [(h, int(n)) for h, n in shown] == reported

    # The export: its markers in order, and its references list.
    text = thread_export(thread=thread, format="markdown").content
    markers = [int(n) for n in re.findall(r"\[\\\[(\d+)\\\]\]\(#ref-[0-9a-f]{12}-\d+\)", text)]
    assert markers == [n for _, n in reported]
    listed = re.findall(r"### <a id=\"ref-[0-9a-f]{12}-(\d+)\"></a>", text)
    assert [int(n) for n in listed] == sorted(set(markers))

    # The stream: an answer streamed now numbers as the page will once it is stored.
    evidence = renders_evidence(
        message_ids=list(thread.messages.filter(type="tool").values_list("id", flat=True))
    )
    stream = SentenceStream(evidence, numbers=thread_source_numbers(thread=thread))
    fresh = list(evidence)
    answer = " ".join(f"More [m{i}](#{h})." for i, h in enumerate(reversed(fresh)))
    streamed = [
        (part["handle"], part["number"])
        for parts in [*stream.feed(answer), *stream.finish()]
        for part in parts
        if part.get("cite") == "resolved"
    ]
    message_append(thread=thread, type="ai", content=answer)
    after = thread_source_numbers(thread=thread)
    assert streamed == [(h, after[h]) for h, _ in streamed]
    assert {h: n for h, n in after.items() if h in numbers} == numbers  # fixed: never renumbered


def test_numbers_are_fixed_at_write_and_a_rerender_keeps_them(user: User) -> None:
    thread, _handles = _generated_thread(user, 7)
    before = thread_source_numbers(thread=thread)
    thread_rerender(thread=thread, force=True)
    assert thread_source_numbers(thread=thread) == before
    thread.refresh_from_db()
    assert thread.source_numbers == before


def test_tool_hits_show_the_threads_numbers_and_an_uncited_hit_none(user: User, client_for: Client) -> None:
    thread = thread_create(owner=user, title="Hits")
    _message, formatted = record_search(
        thread,
        RetrievalHit(text="Alpha is first.", title="alpha.md"),
        RetrievalHit(text="Beta is second.", title="beta.md"),
        RetrievalHit(text="Gamma is third.", title="gamma.md"),
    )
    alpha, beta, gamma = hit_handles(formatted)
    message_append(thread=thread, type="ai", content=f"Gamma [g](#{gamma}) then alpha [a](#{alpha}).")
    page = _page(client_for, thread)
    # The page sends the tool message's summary; its hits load from the fragment route.
    hits_url = re.search(r'data-tool-hits="([^"]+)"', page)
    assert hits_url is not None
    assert 'class="hit-head"' not in page
    tool = re.search(
        r'<details class="tool-message".*?</details>', _page_at(client_for, hits_url.group(1)), re.S
    )
    assert tool is not None
    heads = re.findall(r'<p class="hit-head">(.*?)</p>', tool.group(0), re.S)
    numbers = [re.findall(r'class="hit-number citation-number">\[(\d+)\]<', head) for head in heads]
    # Retrieval order alpha, beta, gamma; first cited gamma [1], then alpha [2]; beta uncited: none.
    assert numbers == [["2"], [], ["1"]]
    assert "hit 1" in heads[0]
    assert "hit 2" in heads[1]
    assert "[3]" not in tool.group(0)
    assert beta not in re.findall(r'data-hit-slot="([^"]+)"', page)


def test_two_sources_with_one_title_are_told_apart(user: User, client_for: Client) -> None:
    thread = thread_create(owner=user, title="Same title")
    _, formatted = record_search(
        thread,
        RetrievalHit(text="The first chunk.", title="guide.md"),
        RetrievalHit(text="The second chunk.", title="guide.md"),
        RetrievalHit(text="Paged.", title="manual.pdf", page=3),
        RetrievalHit(text="Paged again.", title="manual.pdf", page=7),
    )
    first, second, paged3, paged7 = hit_handles(formatted)
    message_append(
        thread=thread,
        type="ai",
        content=f"One [a](#{first}), two [b](#{second}), three [c](#{paged3}), seven [d](#{paged7}).",
    )
    page = _page(client_for, thread)
    notes = dict(
        re.findall(
            r'<li class="source" id="([^"]+)".*?<span class="source-title-note"> \(([^)]+)\)</span>',
            page,
            re.S,
        )
    )
    assert notes == {
        first: "passage 1 of 2",
        second: "passage 2 of 2",
        paged3: "page 3",
        paged7: "page 7",
    }
    assert "guide.md (passage 2 of 2)</a>" in page  # the answer's own source list


def test_reasons_tell_evidence_only_later_no_evidence_and_malformed_apart(
    user: User, client_for: Client
) -> None:
    thread = thread_create(owner=user, title="Reasons")
    hit = RetrievalHit(text="Retrieved afterwards.", title="late.md")
    probe = thread_create(owner=user, title="probe")
    _, late = record_search(probe, hit)
    (later,) = hit_handles(late)
    message_append(
        thread=thread,
        type="ai",
        content=(
            f"Later [early bird](#{later}). "
            f"Nothing [ghost](#knowledge-source-{'0' * 32}). Broken [x](#knowledge-source-ABC)."
        ),
    )
    late_tool, _ = record_search(thread, hit)
    page = _page(client_for, thread)
    reasons = re.findall(
        r'<span class="reason-text"[^>]*>(.*?)</span> The answer labelled it “([^”]*)”; '
        r'its link is <code class="reason-href">([^<]*)</code>',
        page,
        re.S,
    )
    assert [(label, href) for _, label, href in reasons] == [
        ("early bird", f"#{later}"),
        ("ghost", f"#knowledge-source-{'0' * 32}"),
        ("x", "#knowledge-source-ABC"),
    ]
    only_later, nothing, malformed = (reason for reason, _, _ in reasons)
    assert "retrieved only later, in " in only_later
    assert (
        f'<a href="#message-{late_tool.id}" data-reason-later>the knowledge_search result, message 2</a>'
        in (only_later)
    )
    assert nothing == "No tool message before this answer in the thread holds evidence for this source."
    assert malformed == "The handle has upper-case letters; handles are lower case (0-9 and a-f)."
    # The report says "only later" too, from the same stored verdicts.
    report = _report(user, thread)
    assert "later tool message" in report["messages"][0]["citations"][0]["reason"]


def test_a_failed_validation_is_named_as_such(user: User, client_for: Client) -> None:
    thread = thread_create(owner=user, title="Failed")
    probe = thread_create(owner=user, title="probe")
    _, formatted = record_search(probe, RetrievalHit(text="Broken record.", title="broken.md"))
    (bad,) = hit_handles(formatted)
    tool = message_append(
        thread=thread,
        type="tool",
        name="knowledge_search",
        content=formatted.content,
        artifact={"not": "evidence"},
        trusted=True,
        tool_view=formatted.view,
    )
    message_append(thread=thread, type="ai", content=f"Claim [b](#{bad}).")
    page = _page(client_for, thread)
    assert "evidence failed validation" in page  # the hit's own badge
    reason = re.search(r'<span class="reason-text"[^>]*>(.*?)</span> The answer', page, re.S)
    assert reason is not None
    assert f'href="#message-{tool.id}" data-reason-failed' in reason.group(1)
    assert "returned this source, but its evidence failed validation" in reason.group(1)


def test_counters_are_stored_and_read_by_the_header_and_the_list(user: User, client_for: Client) -> None:
    thread = thread_create(owner=user, title="Counted")
    _, formatted = record_search(thread, RetrievalHit(text="Cats purr when content.", title="cats.md"))
    (cats,) = hit_handles(formatted)
    message_append(thread=thread, type="ai", content=f"Cats purr [NASA Earth Fact Sheet](#{cats}).")
    message_append(thread=thread, type="ai", content="I think so, but I cite nothing.")
    message_append(
        thread=thread, type="ai", content="", tool_calls=[{"id": "c1", "name": "search", "args": {}}]
    )
    thread.refresh_from_db()
    assert (thread.citations_resolved, thread.citations_mismatched, thread.answers_uncited) == (1, 1, 1)
    assert thread.source_numbers == {cats: 1}
    page = _page(client_for, thread)
    assert page.count('data-issue="uncited"') == 1
    assert 'class="badge badge-warning">no citations</span>' in page
    listing = client_for.get("/").content.decode()
    assert 'data-verdict="label-mismatch">1 label names another source<' in listing
    assert 'data-verdict="uncited">1 answer without citations<' in listing
    # An import counts the same way.
    text = thread_export(thread=thread, format="markdown").content
    assert (
        "- Citations: 1 (1 source found, 0 no source, 0 malformed); 1 label naming another source; " in text
    )
    assert "1 answer without citations" in text
    assert "*No citations in this answer.*" in text
    assert "\\[label names another source\\]" in text


def test_the_export_of_a_thread_with_every_problem_carries_each_marker(user: User) -> None:
    thread = thread_create(owner=user, title="Problems")
    _, formatted = record_search(thread, RetrievalHit(text="Cats purr when content.", title="cats.md"))
    (cats,) = hit_handles(formatted)
    probe = thread_create(owner=user, title="probe")
    hit = RetrievalHit(text="Dogs bark.", title="dogs.md")
    (later,) = hit_handles(record_search(probe, hit)[1])
    message_append(
        thread=thread,
        type="ai",
        content=(
            f"Cats purr [citation:NASA Earth Fact Sheet](#{cats}), as [citation:cats.md](#{cats}) says. "
            f"Dogs bark [citation:dogs](#{later}). A guess [citation:ghost](#knowledge-source-{'0' * 32}). "
            "Broken [citation:Bad](#knowledge-source-XYZ)."
        ),
    )
    record_search(thread, hit)
    message_append(thread=thread, type="ai", content="All in all, animals make sounds.")
    text = thread_export(thread=thread, format="markdown").content
    tag = re.search(r"ref-([0-9a-f]{12})-1", text)
    assert tag is not None
    marker = f"[\\[1\\]](#ref-{tag.group(1)}-1)"
    assert (
        f"Cats purr NASA Earth Fact Sheet {marker} \\[label names another source\\], as cats.md {marker} says."
        in text
    )
    assert "Dogs bark \\[no source: dogs\\]. A guess \\[no source: ghost\\]." in text
    assert "Broken \\[malformed: Bad\\]." in text
    assert "All in all, animals make sounds.\n\n*No citations in this answer.*" in text
    assert (
        "- Citations: 5 (2 source found, 2 no source, 1 malformed); 1 label naming another source; "
        "1 answer without citations"
    ) in text, text[:300]
    assert "## Sources found by knowledgeweb" in text, text[:400]
    assert "citation:" not in text.split("## ")[0] + "".join(
        part
        for part in text.split("```")[::2]  # outside code blocks (tool output is kept verbatim)
    )
    assert "verified" not in text
