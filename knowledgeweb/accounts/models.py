"""Personal API tokens. Only a SHA-256 digest of a token is stored."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A personal API token. Only a SHA-256 digest of the token is stored."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True)
    # The first characters of the token, so its owner can tell tokens apart.
    prefix = models.CharField(max_length=16, editable=False)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    is_active = models.BooleanField(default=True)

    class Meta:
        # The table predates this app (the model lived in threads): keeping its name makes
        # the move a change of Django's state only, with no data copied.
        db_table = "threads_apitoken"
        ordering = ["-created_at"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"
