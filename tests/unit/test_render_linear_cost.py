"""The render at write does linear work on every hostile input of ``bench/hostile.py``.

Cost is counted, never timed: one operation per call and one per linkifier character:

- **calls**: the function calls (Python functions and built-ins alike) made while one
  answer is rendered and its export regenerated, as ``cProfile`` counts them
  (deterministic: the same input makes the same calls on any machine or load);
- **linkifier characters**: the characters handed to the linkifier (counted by the
  linkifier object itself, whichever rule calls it) or searched for the run a URL sits
  in (``linkgrammar.linkify_counter``). A regular expression does its work inside one
  call, so for the linkifier, whose patterns read on to the next whitespace, what it is
  handed is what measures it. With markdown-it's own inline rule back in place the
  defect's input counts 66.7 million characters at the cap (n²/24) and both tests below
  that name it fail.

At the prose cap an input may cost at most 5x what the same input costs at a quarter
of the cap: linear work costs 4x, quadratic work 16x. A first render
(of a little of every input) runs uncounted first: compiling patterns and filling
per-process caches is no cost of the input's size.
"""

from __future__ import annotations

import cProfile
from dataclasses import dataclass

import pytest

from bench.hostile import HANDLE, cases, linkify_cases
from knowledgeweb.knowledge import Evidence
from knowledgeweb.knowledge.linkgrammar import MAX_TABLE_CELLS, linkify_counter, parse_markdown
from knowledgeweb.threads.rendering.export import message_export_parts
from knowledgeweb.threads.rendering.pipeline import render_assistant_content
from knowledgeweb.threads.services.messages import MAX_PROSE_CHARS

pytestmark = pytest.mark.slow

#: Linear work quadruples from a quarter of the cap to the cap; this leaves room for
#: fixed costs and edge effects, and none for quadratic work (16x).
MAX_GROWTH = 5.0

_HANDLE = HANDLE.removeprefix("#")
_EVIDENCE = {
    _HANDLE: Evidence(
        handle=_HANDLE,
        form="shared",
        id="0" * 32,
        provider="local",
        title="Words",
        excerpt=" ".join(f"Sentence {n} holds some words about links and tables." for n in range(300)),
    )
}
_AT_CAP = cases(MAX_PROSE_CHARS, MAX_TABLE_CELLS)
_AT_QUARTER = cases(MAX_PROSE_CHARS // 4, MAX_TABLE_CELLS)


@dataclass(frozen=True)
class Cost:
    calls: int
    linkifier_chars: int

    @property
    def operations(self) -> int:
        return self.calls + self.linkifier_chars


def _render(text: str) -> None:
    rendered = render_assistant_content(text, _EVIDENCE)
    message_export_parts(rendered.parsed, rendered.verdicts)


def _cost(text: str) -> Cost:
    linkify_counter.reset()
    profile = cProfile.Profile()
    profile.enable()
    try:
        _render(text)
    finally:
        profile.disable()
    calls = sum(entry.callcount for entry in profile.getstats())
    return Cost(calls=calls, linkifier_chars=linkify_counter.count)


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    """Render a little of every input once, uncounted: patterns compile and per-process
    caches fill on first use, which is no cost of the input's size."""
    for text in cases(2_000, MAX_TABLE_CELLS).values():
        _render(text)


@pytest.mark.parametrize("case", sorted(_AT_CAP))
def test_the_cost_at_the_prose_cap_is_at_most_five_times_the_cost_at_a_quarter(case: str) -> None:
    quarter = _cost(_AT_QUARTER[case])
    cap = _cost(_AT_CAP[case])
    assert cap.operations <= MAX_GROWTH * quarter.operations, (case, quarter, cap)


def test_the_linkify_cases_are_in_the_benchmark() -> None:
    names = set(_AT_CAP)
    assert set(linkify_cases(MAX_PROSE_CHARS)) <= names
    assert "linkify: one run of http://a.b/(" in names


def test_the_linkifier_reads_a_bounded_window_per_url() -> None:
    """The defect's own input: the linkifier used to be handed everything after each
    ``://`` (about n²/24 characters for n characters of ``http://a.b/(``)."""
    text = ("http://a.b/(" * (MAX_PROSE_CHARS // 12 + 1))[:MAX_PROSE_CHARS]
    linkify_counter.reset()
    parse_markdown(text)
    quadratic = MAX_PROSE_CHARS**2 // 24
    assert linkify_counter.count <= 4 * MAX_PROSE_CHARS < quadratic // 100
