"""Issuing and checking personal API tokens. Only a digest of a token is stored."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.utils import timezone

from knowledgeweb.accounts.errors import TokenInvalidError
from knowledgeweb.accounts.models import ApiToken
from knowledgeweb.accounts.tokens import VISIBLE_PREFIX_LENGTH, token_digest, token_generate

# Recording every use would turn each API read into a write.
_LAST_USED_RESOLUTION = timedelta(minutes=1)


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
    token = (
        ApiToken.objects.select_related("user")
        .filter(digest=token_digest(raw_token), is_active=True, user__is_active=True)
        .first()
    )
    if token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > _LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user
