"""Claims read from the parse the page shows, and the passage of each source closest to them."""

from __future__ import annotations

import pytest

from knowledgeweb.knowledge import Evidence
from knowledgeweb.knowledge.linkgrammar import parse_markdown
from knowledgeweb.threads.rendering import claims as claims_module
from knowledgeweb.threads.rendering.claims import MAX_COMPARISONS, citation_claims
from knowledgeweb.threads.rendering.pipeline import render_assistant_content

HANDLE = "knowledge-source-" + "5" * 32
SPEECH = Evidence(
    handle=HANDLE,
    form="shared",
    id="5" * 32,
    provider="local",
    title="The Gettysburg Address",
    excerpt=(
        "Four score and seven years ago our fathers brought forth on this continent a new nation. "
        "Now we are engaged in a great civil war, testing whether that nation can long endure. "
        "We are met on a great battle-field of that war."
    ),
    dataset_name="Speeches",
)


def test_a_claim_is_the_sentence_holding_the_marker_without_any_citation_label() -> None:
    text = (
        f"Lincoln spoke of a civil war [NASA facts](#{HANDLE}). "
        f"He met on a [battle-field](https://example.org/field) of that war.[2](#{HANDLE}) "
        f"[first](#{HANDLE}) Then he left."
    )
    assert citation_claims(parse_markdown(text)) == [
        "Lincoln spoke of a civil war.",
        "He met on a battle-field of that war.",  # an ordinary link's words are the claim's
        "He met on a battle-field of that war.",  # a marker right after a sentence belongs to it
    ]


def test_each_block_is_read_on_its_own() -> None:
    text = f"# A heading [h](#{HANDLE})\n\n- one item [i](#{HANDLE})\n- two\n\n> quoted claim [q](#{HANDLE})"
    assert citation_claims(parse_markdown(text)) == ["A heading", "one item", "quoted claim"]


def test_a_citation_alone_in_a_table_cell_claims_what_its_row_says() -> None:
    text = (
        f"- [alone](#{HANDLE})\n\n"
        "| Claim | Source |\n|---|---|\n"
        f"| Cats purr loudly | [c](#{HANDLE}) |\n"
        f"| Dogs bark. [d](#{HANDLE}) | kennel |\n"
    )
    assert citation_claims(parse_markdown(text)) == ["", "Cats purr loudly", "Dogs bark."]


def test_the_closest_passage_of_each_resolved_citation_is_on_its_hook() -> None:
    text = (
        f"They met on a battle-field of that war [x](#{HANDLE}). "
        f"Quarterly tax filings rose sharply [y](#{HANDLE}). "
        f"A guess [z](#knowledge-source-{'0' * 32})."
    )
    rendered = render_assistant_content(text, {HANDLE: SPEECH})
    assert [hook.passage for hook in rendered.hooks] == [(2,), (), ()]
    assert 'data-passage="2"' in rendered.html
    assert rendered.html.count("data-passage") == 1


def test_a_claim_met_again_is_not_compared_again_and_the_work_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    real = claims_module.closest_sentences

    def counting(claim: str, sentences: list[str]) -> tuple[int, ...]:
        calls.append(claim)
        return real(claim, sentences)

    monkeypatch.setattr(claims_module, "closest_sentences", counting)
    same = " ".join([f"They met on a battle-field [x](#{HANDLE})."] * 50)
    rendered = render_assistant_content(same, {HANDLE: SPEECH})
    assert calls == ["They met on a battle-field."]
    assert {hook.passage for hook in rendered.hooks} == {(2,)}

    # Distinct claims against a long excerpt: comparisons stop at the budget, and the
    # citations past it are still resolved, with no passage marked.
    calls.clear()
    sentences = MAX_COMPARISONS // 10
    long = Evidence(
        handle=HANDLE,
        form="shared",
        id="5" * 32,
        provider="local",
        title="Long",
        excerpt=" ".join(f"Sentence {n} mentions the tide." for n in range(sentences)),
    )
    text = " ".join(f"Claim {n} is about the tide [c](#{HANDLE})." for n in range(40))
    rendered = render_assistant_content(text, {HANDLE: long})
    assert len(calls) == MAX_COMPARISONS // sentences == 10
    assert [hook.verdict.state for hook in rendered.hooks] == ["resolved"] * 40
    assert all(hook.passage == () for hook in rendered.hooks[10:])


def test_claims_read_from_a_window_are_the_claims_of_the_whole_block() -> None:
    from knowledgeweb.knowledge.passages import claim_at
    from knowledgeweb.threads.rendering.claims import _claims

    text = (
        "Mr. Lincoln spoke at 3.30 p.m. on Nov. 19. The crowd, e.g. soldiers, listened. "
        "J. R. Young wrote it down… and then left! Was it short? It was: 272 words. "
        "Dr. Wills had invited him.\nThe ceremony ended.  Everyone went home."
    )
    markers = sorted(
        {0, len(text), *range(0, len(text), 7), *(i + 1 for i, c in enumerate(text) if c in ".!?")}
    )
    assert _claims(text, markers) == [claim_at(text, p) for p in markers]
