"""Admin-configured provider bindings (docs/providers.md#bindings)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from knowledgeweb.bindings.choices import BindingScope, provider_choices
from knowledgeweb.bindings.rules import binding_problems


class KnowledgeBinding(models.Model):
    """Who may use which provider, with which credential (named, never stored) and limits.

    No users means nobody may use it: there is never an anonymous fallback.
    """

    name = models.CharField(max_length=100, unique=True)
    title = models.CharField(
        "display name", max_length=100, blank=True, help_text="What readers see, e.g. 'Product docs'."
    )
    description = models.CharField(
        max_length=200, blank=True, help_text="One line telling readers what this source holds."
    )
    provider = models.CharField(max_length=16, choices=provider_choices)
    base_url = models.CharField("base URL", max_length=2048, blank=True)
    api_key_env = models.CharField(
        "API key env",
        max_length=128,
        blank=True,
        help_text="The NAME of the environment variable that holds the API key; it must start with "
        "KNOWLEDGEWEB_KEY_, e.g. KNOWLEDGEWEB_KEY_RAGFLOW. The key itself is read at use and never stored. "
        "Leave empty for the local index.",
    )
    users = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="knowledge_bindings")
    agent_names = models.JSONField(default=list, blank=True)
    # Web pages send no agent name, so agent names alone shut the browser out (bindings/access.py).
    browser_use = models.BooleanField(
        "usable in the browser",
        default=False,
        help_text="With agent names set, also let its users use it on the web pages (Ask), which send no "
        "agent name. Without agent names it is usable everywhere anyway.",
    )
    # Ranges and combinations are checked by ``binding_problems`` (one clear message each).
    tools = models.JSONField(default=list, blank=True)
    top_k = models.PositiveSmallIntegerField(default=20, help_text="Results per search, 1-100.")
    timeout = models.PositiveSmallIntegerField(default=30, help_text="Seconds, 1-120.")
    scope = models.CharField(max_length=16, choices=BindingScope.choices, default=BindingScope.ALL)
    selection = models.JSONField(default=list, blank=True)
    query_modes = models.JSONField(
        default=list, blank=True, help_text="LightRAG query modes a search may pick; empty means the default."
    )
    default_mode = models.CharField(
        max_length=16, blank=True, help_text="LightRAG query mode used by default."
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "knowledge binding"

    def __str__(self) -> str:
        return f"{self.name} ({self.provider})"

    def clean(self) -> None:
        problems = binding_problems(**self.rule_fields())
        if problems:
            raise ValidationError(problems)

    def rule_fields(self) -> dict[str, Any]:
        """The fields ``binding_problems`` checks, as stored."""
        return {
            "name": self.name,
            "provider": self.provider,
            "base_url": self.base_url,
            "api_key_env": self.api_key_env,
            "agent_names": self.agent_names,
            "tools": self.tools,
            "top_k": self.top_k,
            "timeout": self.timeout,
            "scope": self.scope,
            "selection": self.selection,
            "query_modes": self.query_modes,
            "default_mode": self.default_mode,
        }
