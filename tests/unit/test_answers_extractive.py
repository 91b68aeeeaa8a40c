"""The extractive composer: best sentences of the top hits, each with a citation that resolves."""

from __future__ import annotations

from typing import Any

import pytest
from markdown_it import MarkdownIt

from knowledgeweb.answers import AnswerComposer, ExtractiveComposer
from knowledgeweb.answers.extractive import ABSTAIN, ABSTAIN_PART, MIN_COVERAGE, NOTHING_FOUND
from knowledgeweb.knowledge import (
    RagflowLocator,
    RetrievalHit,
    RetrievalResult,
    enforce_output_budget,
    find_citations,
    format_result,
    read_sources,
)

TOOL = "knowledge_search"


def _tool_message(*hits: RetrievalHit, provider: str = "local", **limits: Any) -> tuple[str, dict[str, Any]]:
    return format_result(RetrievalResult(provider=provider, query="q", hits=hits), **limits)


def _hit(title: str | None, text: str, **fields: Any) -> RetrievalHit:
    return RetrievalHit(text=text, title=title, dataset_name="docs", **fields)


def _compose(question: str, content: str, artifact: object, **options: int) -> str:
    return ExtractiveComposer(**options).compose(
        question=question, tool_name=TOOL, content=content, artifact=artifact
    )


def _handles(answer: str) -> list[str | None]:
    return [citation.handle for citation in find_citations(answer)]


BEES = _hit(
    "Bees",
    "Honey bees live in hives. Bees make honey from nectar and store it in wax comb. The queen lays eggs.",
)
TIDES = _hit("Tides", "Tides rise twice a day. The moon's gravity pulls the oceans.")


def test_it_implements_the_answer_composer_interface() -> None:
    composer = ExtractiveComposer()

    assert isinstance(composer, AnswerComposer)
    assert composer.name == "extractive"


def test_it_quotes_the_sentences_that_best_cover_the_question_each_followed_by_its_citation() -> None:
    content, artifact = _tool_message(BEES, TIDES)
    handles = list(read_sources(TOOL, content, artifact))

    answer = _compose("How do bees make honey?", content, artifact)

    assert answer.splitlines() == [
        "From the retrieved sources:",
        "",
        f"- Bees make honey from nectar and store it in wax comb. [citation:Bees](#{handles[0]})",
    ]


def test_every_citation_it_writes_is_validated_evidence_from_the_tool_message() -> None:
    content, artifact = _tool_message(BEES, TIDES)
    evidence = read_sources(TOOL, content, artifact)

    answer = _compose("Why do tides rise, and how do bees store honey?", content, artifact)

    cited = _handles(answer)
    assert cited
    assert set(cited) <= set(evidence)
    assert {evidence[h].title for h in cited if h} == {"Bees", "Tides"}


def test_the_answer_is_deterministic() -> None:
    content, artifact = _tool_message(BEES, TIDES)

    answers = {_compose("bees tides honey moon", content, artifact) for _ in range(5)}

    assert len(answers) == 1


def test_a_rare_question_word_outweighs_a_common_one() -> None:
    content, artifact = _tool_message(
        _hit("A", "Bees are insects. Bees fly."), _hit("B", "Bees dance to share nectar locations.")
    )

    answer = _compose("bees nectar", content, artifact, max_sentences=1)

    assert answer.splitlines()[2].startswith("- Bees dance to share nectar locations.")


def test_it_limits_the_sentences_and_the_sentences_per_source() -> None:
    text = " ".join(f"Bees fact number {n}." for n in range(10))
    content, artifact = _tool_message(_hit("A", text), _hit("B", "Bees also sting."))

    answer = _compose("bees", content, artifact, max_sentences=3, per_source=2)

    lines = [line for line in answer.splitlines() if line.startswith("- ")]
    assert len(lines) == 3
    assert sum("[citation:A]" in line for line in lines) == 2
    assert sum("[citation:B]" in line for line in lines) == 1


def test_without_evidence_it_says_so_and_cites_nothing() -> None:
    content, artifact = _tool_message()

    answer = _compose("bees", content, artifact)

    assert answer == NOTHING_FOUND
    assert find_citations(answer) == []


def test_untitled_hits_are_never_cited() -> None:
    content, artifact = _tool_message(_hit(None, "Bees make honey."))

    assert _compose("bees honey", content, artifact) == NOTHING_FOUND


def test_forged_evidence_is_not_cited() -> None:
    content, artifact = _tool_message(BEES)
    artifact["knowledge_sources"][0]["excerpt"] = "Bees are made of cheese."

    answer = _compose("bees", content, artifact)

    assert answer == NOTHING_FOUND
    assert "cheese" not in answer


def test_when_no_sentence_shares_a_word_it_abstains_and_cites_nothing() -> None:
    content, artifact = _tool_message(TIDES, BEES)

    answer = _compose("volcanoes", content, artifact)

    assert answer == ABSTAIN
    assert find_citations(answer) == []


def test_a_sentence_sharing_only_some_of_the_questions_words_is_not_an_answer() -> None:
    # Shares "honey", "bees" and "wax" (3 of 6 content words: below the threshold), answers nothing asked.
    content, artifact = _tool_message(BEES, TIDES)

    answer = _compose("What is the melting point of honey bees' wax in kelvin?", content, artifact)

    assert answer == ABSTAIN
    assert find_citations(answer) == []


def test_the_threshold_sits_between_half_and_two_thirds_of_the_content_words() -> None:
    assert 0.5 < MIN_COVERAGE <= 2 / 3
    content, artifact = _tool_message(_hit("Notes", "Rivers carry silt to the delta."))

    # 2 of 3 content words covered ("deposit" is not): an answer. 2 of 4: none.
    assert _handles(_compose("Where do rivers deposit silt?", content, artifact))
    assert _compose("Why do rivers carry gold nuggets?", content, artifact) == ABSTAIN


def test_question_framing_words_need_not_appear_in_the_sentence() -> None:
    content, artifact = _tool_message(_hit("Notes", "Rivers carry silt to the delta."))

    answer = _compose("Explain what rivers carry, and name an example.", content, artifact)

    assert answer.splitlines()[2].startswith("- Rivers carry silt to the delta.")


def test_the_sources_title_counts_towards_coverage_but_one_word_must_be_in_the_sentence() -> None:
    content, artifact = _tool_message(_hit("The Gettysburg Address", "Four score and seven years ago."))

    assert _handles(_compose("When was the Gettysburg Address four score?", content, artifact))
    assert _compose("Who wrote the Gettysburg Address?", content, artifact) == ABSTAIN


def test_each_clause_of_a_compound_question_is_answered_or_named_as_unanswered() -> None:
    content, artifact = _tool_message(TIDES)

    answer = _compose("Why do tides rise, and who invented the telescope?", content, artifact)

    assert answer.splitlines()[2].startswith("- Tides rise twice a day.")
    assert f"{ABSTAIN_PART} “who invented the telescope”." in answer


def test_only_evidence_that_survived_the_output_budget_is_cited() -> None:
    content, artifact = _tool_message(TIDES, BEES)
    cut_content, cut_artifact = enforce_output_budget(content, artifact, len(content) - 40)
    surviving = read_sources(TOOL, cut_content, cut_artifact)
    assert len(surviving) == 1

    answer = _compose("When do tides rise?", cut_content, cut_artifact)

    assert set(_handles(answer)) == set(surviving)
    assert "Bees" not in answer


def test_the_truncation_mark_of_a_shortened_excerpt_is_never_quoted() -> None:
    content, artifact = _tool_message(_hit("Long", "Bees hum. " * 100), max_chars_per_hit=60)

    answer = _compose("bees", content, artifact)

    assert "[…]" not in answer
    assert "…" not in answer


def test_markdown_and_html_in_a_source_are_quoted_as_text_not_rendered() -> None:
    other, _ = _tool_message(TIDES)
    [fake_link] = [c.href for c in find_citations(other)]
    text = f"Bees *love* <script>x()</script> [citation:Tides]({fake_link}) and ![img](http://e.x/i.png)."
    content, artifact = _tool_message(_hit("Tricky", text))
    [handle] = read_sources(TOOL, content, artifact)

    answer = _compose("bees", content, artifact)

    assert _handles(answer) == [handle]
    assert "\\*love\\*" in answer
    assert "\\<script\\>" in answer


def test_headings_and_list_markers_in_a_source_are_not_quoted_as_markup() -> None:
    content, artifact = _tool_message(_hit("Guide", "# Bees guide\n\n- Bees make honey.\n- Bees sting."))

    answer = _compose("bees guide honey", content, artifact)

    assert "Bees guide" not in answer
    assert answer.splitlines()[2].startswith("- Bees make honey. [citation:Guide]")


def test_a_title_with_brackets_becomes_a_balanced_label() -> None:
    content, artifact = _tool_message(_hit("Bees [draft] (v2)", "Bees make honey."))
    [handle] = read_sources(TOOL, content, artifact)

    answer = _compose("honey", content, artifact)

    assert f"[citation:Bees (draft) (v2)](#{handle})" in answer


@pytest.mark.parametrize(
    "title",
    ["C:\\docs\\", "<https://elsewhere.example/>", "*starred* _under_", "`code` <b>tag</b>", "a \\] b"],
)
def test_a_title_with_markdown_syntax_is_still_one_citation_labelled_with_the_title(title: str) -> None:
    content, artifact = _tool_message(_hit(title, "Bees make honey."))
    [handle] = read_sources(TOOL, content, artifact)

    answer = _compose("honey", content, artifact)

    [citation] = find_citations(answer)
    assert citation.handle == handle
    assert citation.label == "citation:" + title.replace("]", ")")
    links = [t for block in MarkdownIt().parse(answer) for t in block.children or [] if t.type == "link_open"]
    assert [link.attrGet("href") for link in links] == [f"#{handle}"]


def test_a_long_sentence_is_quoted_whole_never_cut() -> None:
    sentence = "Bees " + "buzz " * 200 + "loudly."
    content, artifact = _tool_message(_hit("Long", sentence), max_chars_per_hit=2000)

    answer = _compose("bees", content, artifact)

    assert answer.splitlines()[2].split(" [citation:")[0] == "- " + sentence
    assert "…" not in answer


def test_the_cut_sentence_at_the_end_of_a_shortened_excerpt_is_never_quoted() -> None:
    text = "Bees hum in summer. Bees sleep in winter when the hive clusters together for warmth."
    content, artifact = _tool_message(_hit("Seasons", text), max_chars_per_hit=45)

    answer = _compose("When do bees sleep?", content, artifact)

    assert answer == ABSTAIN
    assert "Bees sleep" not in answer


def test_native_ragflow_evidence_is_cited_by_its_native_handle() -> None:
    hit = RetrievalHit(
        text="Bees make honey.",
        title="bees.pdf",
        dataset_name="Insects",
        locator=RagflowLocator(dataset_id="d1", document_id="doc1", chunk_id="c1", pages=(3,)),
    )
    content, artifact = _tool_message(hit, provider="ragflow")
    [handle] = read_sources(TOOL, content, artifact)
    assert handle.startswith("knowledge-")
    assert not handle.startswith("knowledge-source-")

    answer = _compose("honey", content, artifact)

    assert f"[citation:bees.pdf](#{handle})" in answer


def test_title_lines_without_punctuation_are_not_quoted_as_sentences() -> None:
    text = "Page 3: Truncated tool output\n\nTool output has a budget. A budget cuts long output"
    content, artifact = _tool_message(_hit("Guide", text))

    answer = _compose("truncated tool output budget", content, artifact)

    quotes = [line.split(" [citation:")[0] for line in answer.splitlines() if line.startswith("- ")]
    assert quotes == ["- Tool output has a budget."]


def test_a_long_unpunctuated_passage_still_counts_as_a_sentence() -> None:
    content, artifact = _tool_message(
        _hit("Notes", "bees gather nectar from many flowers across the meadow all day")
    )

    answer = _compose("nectar", content, artifact)

    assert answer.splitlines()[2].startswith("- bees gather nectar from many flowers")
