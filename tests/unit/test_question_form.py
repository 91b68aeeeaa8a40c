"""One question form: the Ask page, the follow-up and the streams all read a post with QuestionForm."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from knowledgeweb.web.question_form import MAX_NAME_CHARS, QuestionForm

WEB = Path(__file__).resolve().parents[2] / "knowledgeweb" / "web"
OFFERS = {"bindings": [("guide", "Field guide")], "composers": [("extractive", "Quoted sentences")]}


def test_a_page_refuses_a_source_it_did_not_offer() -> None:
    form = QuestionForm({"question": "owls", "binding": "bobs"}, **OFFERS)

    assert not form.is_valid()
    assert form.error() == ("Choose one of your sources.", "binding")


def test_a_page_accepts_what_it_offered_and_reads_it_once() -> None:
    form = QuestionForm({"question": " owls ", "binding": "guide", "composer": "extractive"}, **OFFERS)

    assert form.is_valid()
    assert form.cleaned_data == {"question": "owls", "binding": "guide", "composer": "extractive"}


def test_without_offers_the_service_checks_the_binding() -> None:
    form = QuestionForm({"question": "owls", "binding": "nope", "composer": "nope"})

    assert form.is_valid()
    assert form.cleaned_data["binding"] == "nope"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"binding": "guide"}, ("Enter a question.", "question")),
        ({"question": "owls"}, ("Choose a source.", "binding")),
        ({"question": "owls", "binding": "guide\x00"}, ("Null characters are not allowed.", "binding")),
        (
            {"question": "owls", "binding": "g" * (MAX_NAME_CHARS + 1)},
            (
                f"Ensure this value has at most {MAX_NAME_CHARS} characters (it has {MAX_NAME_CHARS + 1}).",
                "binding",
            ),
        ),
        (
            {"question": "owls", "binding": "guide", "composer": "m\x00"},
            ("Null characters are not allowed.", "binding"),
        ),
    ],
)
def test_without_offers_a_malformed_post_is_still_refused(
    data: dict[str, str], expected: tuple[str, str]
) -> None:
    form = QuestionForm(data)

    assert not form.is_valid()
    assert form.error() == expected


def test_no_other_form_in_web_reads_a_question() -> None:
    holders = []
    for path in sorted(WEB.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(item, ast.Assign) and any(getattr(t, "id", "") == "question" for t in item.targets)
                for item in node.body
            ):
                holders.append(f"{path.name}:{node.name}")
    assert holders == ["question_form.py:QuestionForm"]
