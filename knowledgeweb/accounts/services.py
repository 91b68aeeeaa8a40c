"""Issuing and checking personal API tokens. Only a digest of a token is stored."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import BooleanField, Case, F, Q, QuerySet, Value, When
from django.utils import timezone

from knowledgeweb.accounts.errors import TokenInvalidError
from knowledgeweb.accounts.models import ApiToken
from knowledgeweb.accounts.tokens import VISIBLE_PREFIX_LENGTH, token_digest, token_generate
from knowledgeweb.ops.prepared import PreparedQuery, as_field

# Recording every use would turn each API read into a write.
_LAST_USED_RESOLUTION = timedelta(minutes=1)


def _token_owner(*, digest: str, stale_before: datetime) -> QuerySet[User]:
    """The active owner of the active token with ``digest``, with the token's id and whether
    its last use is older than ``stale_before`` (or unrecorded)."""
    return (
        User.objects.filter(api_tokens__digest=digest, api_tokens__is_active=True, is_active=True)
        .annotate(
            api_token_id=F("api_tokens__id"),
            api_token_stale=Case(
                When(
                    Q(api_tokens__last_used_at__isnull=True) | Q(api_tokens__last_used_at__lt=stale_before),
                    then=Value(True),
                ),
                default=Value(False),
                output_field=BooleanField(),
            ),
        )
        .order_by()[:1]
    )


# Every API request asks this; compiled once, it costs a fraction of the queryset's
# construction (knowledgeweb/ops/prepared.py). Same rows, same single query.
_TOKEN_OWNER = PreparedQuery(
    _token_owner,
    placeholders={
        "digest": "placeholder-digest-" + "0" * 45,
        "stale_before": datetime(2001, 2, 3, 4, 5, 6, 789012, tzinfo=UTC),
    },
    # Compared with the column as the ORM compares it: adapted by the field itself.
    prepare={"stale_before": as_field(ApiToken, "last_used_at")},
)


def token_create(*, user: User, name: str = "") -> tuple[ApiToken, str]:
    """Issue a token for ``user``. Returns the stored row and the raw token, which exists only here."""
    raw = token_generate()
    token = ApiToken(user=user, name=name, prefix=raw[:VISIBLE_PREFIX_LENGTH], digest=token_digest(raw))
    try:
        token.full_clean()
    except ValidationError as exc:
        raise TokenInvalidError(" ".join(exc.messages)) from exc
    token.save()
    return token, raw


def token_authenticate(*, raw_token: str) -> User | None:
    """The active user owning this active token, or None. Records when the token was last used."""
    if not raw_token or len(raw_token) > 256:
        return None
    now = timezone.now()
    owners = _TOKEN_OWNER.run(digest=token_digest(raw_token), stale_before=now - _LAST_USED_RESOLUTION)
    if not owners:
        return None
    user = owners[0]
    if user.api_token_stale:  # type: ignore[attr-defined]
        ApiToken.objects.filter(pk=user.api_token_id).update(last_used_at=now)  # type: ignore[attr-defined]
    return user
