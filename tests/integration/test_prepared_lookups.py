"""The token check and the caller's bindings run as queries compiled once (ops/prepared.py):
the same answers as the querysets they are compiled from, in one query each."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db.models import F
from django.utils import timezone

from knowledgeweb.accounts.models import ApiToken
from knowledgeweb.accounts.services import token_authenticate, token_create
from knowledgeweb.bindings.selectors import binding_list_enabled_for_user, binding_list_for_user
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.ops.prepared import PreparedQuery

pytestmark = pytest.mark.django_db


def test_a_token_first_used_authenticates_its_user_and_records_the_use(
    user: User, django_assert_num_queries: Any
) -> None:
    token, raw = token_create(user=user, name="t")
    with django_assert_num_queries(2):  # the lookup, and the first use recorded
        found = token_authenticate(raw_token=raw)
    assert found == user
    assert found.username == user.username
    assert found.is_active is True
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_a_use_within_a_minute_of_the_last_writes_nothing(user: User, django_assert_num_queries: Any) -> None:
    token, raw = token_create(user=user)
    recent = timezone.now() - timedelta(seconds=30)
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=recent)
    with django_assert_num_queries(1):
        assert token_authenticate(raw_token=raw) == user
    token.refresh_from_db()
    assert token.last_used_at == recent


def test_a_use_more_than_a_minute_after_the_last_is_recorded(user: User) -> None:
    token, raw = token_create(user=user)
    old = timezone.now() - timedelta(minutes=2)
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=old)
    assert token_authenticate(raw_token=raw) == user
    token.refresh_from_db()
    assert token.last_used_at is not None
    assert token.last_used_at > old


def test_a_revoked_token_an_inactive_owner_or_another_token_finds_nobody(
    user: User, other_user: User
) -> None:
    revoked, revoked_raw = token_create(user=user)
    ApiToken.objects.filter(pk=revoked.pk).update(is_active=False)
    _, inactive_raw = token_create(user=other_user)
    User.objects.filter(pk=other_user.pk).update(is_active=False)
    _, live_raw = token_create(user=user)
    assert token_authenticate(raw_token=revoked_raw) is None
    assert token_authenticate(raw_token=inactive_raw) is None
    assert token_authenticate(raw_token=live_raw[:-1] + ("A" if live_raw[-1] != "A" else "B")) is None
    assert token_authenticate(raw_token=live_raw) == user
    # A revoked token is never marked as used.
    revoked.refresh_from_db()
    assert revoked.last_used_at is None


def test_the_callers_bindings_are_the_querysets_own(
    user: User, other_user: User, django_assert_num_queries: Any
) -> None:
    for name, users, enabled in [
        ("zeta", [user], True),
        ("alpha", [user, other_user], True),
        ("theirs", [other_user], True),
        ("off", [user], False),
    ]:
        binding_create(
            name=name,
            provider="lightrag",
            base_url="https://lightrag.example",
            api_key_env="KNOWLEDGEWEB_KEY_TEST",
            tools=["knowledge_search"],
            users=users,
            enabled=enabled,
        )
    with django_assert_num_queries(1):
        mine = binding_list_enabled_for_user(user=user)
    assert [b.name for b in mine] == ["alpha", "zeta"]
    assert mine == list(binding_list_for_user(user=user))
    # Fields come back converted as the ORM converts them (JSON lists, not text).
    assert mine[0].tools == ["knowledge_search"]
    assert [b.name for b in binding_list_enabled_for_user(user=other_user)] == ["alpha", "theirs"]


def test_a_placeholder_the_compiled_query_repeats_is_refused(user: User) -> None:
    twice = PreparedQuery(
        lambda name: User.objects.filter(username=name) | User.objects.filter(first_name=name),
        placeholders={"name": "placeholder-name"},
    )
    with pytest.raises(ValueError, match="appears 2 times"):
        twice.run(name=user.username)


def test_annotations_arrive_converted_as_the_orm_converts_them(user: User) -> None:
    token, _ = token_create(user=user)
    active = PreparedQuery(
        lambda name: User.objects.filter(username=name).annotate(
            token_active=F("api_tokens__is_active"), token_created=F("api_tokens__created_at")
        ),
        placeholders={"name": "placeholder-name"},
    )
    [found] = active.run(name=user.username)
    [expected] = User.objects.filter(username=user.username).annotate(
        token_active=F("api_tokens__is_active"), token_created=F("api_tokens__created_at")
    )
    assert found.token_active is True  # type: ignore[attr-defined]
    assert found.token_created == token.created_at  # type: ignore[attr-defined]
    assert {k: v for k, v in vars(found).items() if k != "_state"} == {
        k: v for k, v in vars(expected).items() if k != "_state"
    }
    assert found._state.adding is False
    assert found._state.db == expected._state.db


def test_a_query_reading_related_rows_is_refused(user: User) -> None:
    related = PreparedQuery(
        lambda digest: ApiToken.objects.select_related("user").filter(digest=digest),
        placeholders={"digest": "placeholder-digest"},
    )
    with pytest.raises(ValueError, match="without select_related"):
        related.run(digest="x")
