"""Agreement measures reproduce published examples (issue 27)."""

from __future__ import annotations

import pytest

from knowledgeweb.review.agreement import cohen_kappa, krippendorff_alpha

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the nominal example:
# four observers, twelve units, missing values (None); alpha = 0.743.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def test_krippendorff_alpha_nominal_reproduces_the_published_example() -> None:
    alpha = krippendorff_alpha(KRIPPENDORFF_2011)
    assert alpha == pytest.approx(0.743, abs=0.0005)


def test_alpha_is_perfect_for_full_agreement_and_undefined_without_pairs() -> None:
    assert krippendorff_alpha([[1, 2, 1], [1, 2, 1]]) == pytest.approx(1.0)
    assert krippendorff_alpha([[1, None], [None, 2]]) is None  # no unit has two values
    assert krippendorff_alpha([]) is None


def test_cohen_kappa_reproduces_the_textbook_two_by_two_table() -> None:
    # Both yes 20, A yes B no 5, A no B yes 10, both no 15: po = 0.7, pe = 0.5, kappa = 0.40.
    pairs = [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15
    assert cohen_kappa(pairs) == pytest.approx(0.40)


def test_cohen_kappa_is_undefined_without_units_or_with_one_category_only() -> None:
    assert cohen_kappa([]) is None
    assert cohen_kappa([("a", "a"), ("a", "a")]) is None
