"""Validators match the whole value: a trailing newline (which ``^...$`` with ``re.match``
lets through) is refused everywhere a name, an id or a header is checked."""

from __future__ import annotations

import re

import pytest
from django.core.exceptions import ImproperlyConfigured

from knowledgeweb.environment import env_rate
from knowledgeweb.ops.requestlog import _VALID_ID
from knowledgeweb.providers.connection_rules import NAME_PATTERN
from knowledgeweb.providers.credentials import ENV_NAME_PATTERN, key_env_problem
from knowledgeweb.providers.local.selection import LOCAL_COLLECTION_ID
from knowledgeweb.providers.ragflow.scope import RESOURCE_ID_PATTERN


@pytest.mark.parametrize(
    ("pattern", "good"),
    [
        (ENV_NAME_PATTERN, "KNOWLEDGEWEB_KEY_RAGFLOW"),
        (RESOURCE_ID_PATTERN, "b6c3a1f0e9d8"),
        (NAME_PATTERN, "product-docs"),
        (LOCAL_COLLECTION_ID, "42"),
        (_VALID_ID, "3233205e95fb44b9b0227f406017ebc0"),
    ],
)
def test_a_valid_value_passes_and_the_same_value_with_a_trailing_newline_does_not(
    pattern: re.Pattern[str], good: str
) -> None:
    assert pattern.fullmatch(good)
    assert not pattern.fullmatch(good + "\n")


def test_a_key_variable_with_a_trailing_newline_is_refused_with_the_usual_message() -> None:
    assert key_env_problem("KNOWLEDGEWEB_KEY_RAGFLOW") is None
    problem = key_env_problem("KNOWLEDGEWEB_KEY_RAGFLOW\n")
    assert problem is not None
    assert problem.startswith("Enter the NAME of an environment variable")


def test_a_rate_with_a_trailing_newline_is_still_read_since_spaces_around_it_are_allowed() -> None:
    # The rate pattern allows surrounding whitespace on purpose; a newline is whitespace.
    assert env_rate("R", "x", environ={"R": "30/minute\n"}) == (30, 60)
    with pytest.raises(ImproperlyConfigured):
        env_rate("R", "x", environ={"R": "30/minute\nextra"})
