"""Text-fragment links: the opening words of an excerpt as a ``:~:text=`` directive on its source URL."""

from __future__ import annotations

from urllib.parse import unquote

import pytest

from knowledgeweb.knowledge.fragments import MAX_WORDS, directive_encode, opening_words, text_fragment_url

URL = "https://example.org/guide"


def directive(url: str | None) -> str:
    assert url is not None
    return url.split(":~:text=", 1)[1]


def test_the_opening_words_become_a_directive_after_a_new_fragment() -> None:
    assert text_fragment_url(URL, "Rotate keys every month") == f"{URL}#:~:text=Rotate%20keys%20every%20month"


@pytest.mark.parametrize(
    ("text", "encoded"),
    [
        ('say "yes"', "say%20%22yes%22"),
        ("salt & pepper", "salt%20%26%20pepper"),
        ("well-known", "well%2Dknown"),
        ("one, two", "one%2C%20two"),
        ("50% off", "50%25%20off"),
        ("a#b c?d", "a%23b%20c%3Fd"),
        ("it's (fine)", "it%27s%20%28fine%29"),
        ("café 字 😀", "caf%C3%A9%20%E5%AD%97%20%F0%9F%98%80"),
        ("a.b_c~d", "a.b_c~d"),
        ("x:~:y", "x%3A~%3Ay"),
    ],
)
def test_the_directive_is_percent_encoded_with_its_delimiters(text: str, encoded: str) -> None:
    assert directive_encode(text) == encoded
    assert directive(text_fragment_url(URL, text)) == encoded
    # Nothing but unreserved characters and escapes: a delimiter can never leak through.
    assert all(ch.isascii() and (ch.isalnum() or ch in "._~%") for ch in encoded)
    assert unquote(encoded) == text


def test_an_existing_fragment_is_kept_before_the_directive() -> None:
    assert text_fragment_url(f"{URL}#install", "Run it") == f"{URL}#install:~:text=Run%20it"
    assert text_fragment_url(f"{URL}?q=1&r=2#", "Run it") == f"{URL}?q=1&r=2#:~:text=Run%20it"


@pytest.mark.parametrize(
    "url",
    [
        f"{URL}#:~:text=old%20words",
        f"{URL}#install:~:text=old&text=more",
        f"{URL}#install:~:text=old:~:text=again",
    ],
)
def test_an_existing_directive_is_replaced(url: str) -> None:
    made = text_fragment_url(url, "New words")
    assert made is not None
    assert made.endswith(":~:text=New%20words")
    assert made.count(":~:") == 1
    assert "old" not in made


def test_whitespace_and_newlines_before_the_excerpt_are_skipped() -> None:
    assert (
        directive(text_fragment_url(URL, "\n\n   \t Opening line here\nnext line")) == "Opening%20line%20here"
    )
    assert opening_words("\r\n\r\nWindows lines\r\nmore") == "Windows lines"


def test_marks_before_the_first_word_are_left_out() -> None:
    assert opening_words("- Bullet item text") == "Bullet item text"
    assert opening_words("## Heading words\nbody") == "Heading words"
    assert opening_words("* * *\n\nAfter the rule") == "After the rule"


def test_the_words_stop_at_the_limit() -> None:
    words = [f"w{n}" for n in range(1, 20)]
    assert opening_words(" ".join(words)) == " ".join(words[:MAX_WORDS])
    assert directive(text_fragment_url(URL, " ".join(words))).count("%20") == MAX_WORDS - 1
    assert opening_words("a b c d", max_words=2) == "a b"


def test_the_words_never_cross_a_line_break_or_a_sentence_end() -> None:
    assert opening_words("Short line\ncontinues on the next line") == "Short line"
    assert opening_words("First sentence. Second sentence is longer") == "First sentence."
    assert opening_words('He said "stop!" and left') == 'He said "stop!"'
    assert opening_words("Really? Yes") == "Really?"
    assert opening_words("句子结束。 下一个") == "句子结束。"
    assert opening_words("Line one\u2028line two") == "Line one"
    # A single word is enough.
    assert opening_words("Word. More") == "Word."


def test_a_shortened_excerpt_drops_its_mark() -> None:
    assert opening_words("Two words […]") == "Two words"


@pytest.mark.parametrize("excerpt", ["", "   ", "\n\n\t", "- * #", "— …"])
def test_an_excerpt_without_words_makes_no_link(excerpt: str) -> None:
    assert opening_words(excerpt) is None
    assert text_fragment_url(URL, excerpt) is None


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.org/file",
        "javascript:alert(1)",
        "data:text/html,hi",
        "mailto:someone@example.org",
        "/relative/path",
        "//example.org/no-scheme",
        "https://",
        "https:///path-only",
        "https://exa mple.org/",
        "https://example.org/\nsecond",
        "http://[::1/bad",
        "",
    ],
)
def test_only_absolute_http_urls_get_a_directive(url: str) -> None:
    assert text_fragment_url(url, "Some words") is None


def test_http_in_any_case_and_with_a_query_is_accepted() -> None:
    assert text_fragment_url("HTTP://Example.org/a?b=c", "Hi") == "HTTP://Example.org/a?b=c#:~:text=Hi"
