"""The client's address, as far as the configured proxies can vouch for it."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    """The address rate limits count against.

    With ``TRUSTED_PROXY_COUNT = n`` (0 by default) the n-th address from the right
    of ``X-Forwarded-For`` is the client: each trusted proxy appends the address it
    received the request from, so everything further left may be forged by the
    client. With 0, or a header shorter than claimed, the socket's peer is used.
    """
    peer = str(request.META.get("REMOTE_ADDR") or "unknown")
    count = int(getattr(settings, "TRUSTED_PROXY_COUNT", 0))
    if count <= 0:
        return peer
    forwarded = [part.strip() for part in str(request.META.get("HTTP_X_FORWARDED_FOR", "")).split(",")]
    forwarded = [part for part in forwarded if part]
    if len(forwarded) < count:
        return peer
    return forwarded[-count]
