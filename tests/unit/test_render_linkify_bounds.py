"""Bare URLs are linked as before, except inside runs of non-space text over the run cap."""

from __future__ import annotations

from knowledgeweb.knowledge.linkgrammar import MAX_LINKIFY_RUN, parse_markdown


def _hrefs(text: str) -> list[str]:
    return [link.href for link in parse_markdown(text).links]


def test_it_links_bare_urls_and_email_addresses_in_prose() -> None:
    assert _hrefs("See https://example.org/a_(b) and http://e.org/x. Mail a.b@c.de now.") == [
        "https://example.org/a_(b)",
        "http://e.org/x",
        "mailto:a.b@c.de",
    ]


def test_it_links_a_url_as_long_as_the_run_cap() -> None:
    url = "https://example.org/" + "a" * (MAX_LINKIFY_RUN - len("https://example.org/"))
    assert len(url) == MAX_LINKIFY_RUN
    assert _hrefs(f"words {url} words") == [url]
    assert _hrefs(url) == [url]


def test_a_url_in_a_run_longer_than_the_cap_stays_text() -> None:
    url = "https://example.org/" + "a" * (MAX_LINKIFY_RUN + 1 - len("https://example.org/"))
    parsed = parse_markdown(f"words {url} words")
    assert parsed.links == ()
    assert not parsed.as_written
    # Text before a long run is linked as it always was.
    assert _hrefs(f"https://e.org/x {url}") == ["https://e.org/x"]


def test_urls_glued_into_one_long_run_stay_text_and_the_rest_is_linked() -> None:
    glued = "http://a.b/(" * (MAX_LINKIFY_RUN // 12 + 1)
    assert _hrefs(f"{glued} then http://e.org/y and a@b.cd") == ["http://e.org/y", "mailto:a@b.cd"]


def test_email_addresses_in_a_long_run_stay_text() -> None:
    glued = "a@b.cd," * (MAX_LINKIFY_RUN // 7 + 1)
    assert _hrefs(f"{glued} x@y.org") == ["mailto:x@y.org"]
    assert _hrefs("a@b.cd, " * 3) == ["mailto:a@b.cd"] * 3


def test_a_short_run_of_glued_urls_is_linked_as_before() -> None:
    assert _hrefs("http://a.b/(http://a.b/(") == ["http://a.b/", "http://a.b/"]
