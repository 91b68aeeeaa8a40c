"""Admin-configured answer models: an OpenAI-compatible chat-completions server and who may use it."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from knowledgeweb.composer.rules import answer_model_problems


class AnswerModel(models.Model):
    """A model server answers may be composed with. No users means nobody may use it."""

    name = models.CharField(max_length=100, unique=True)
    base_url = models.CharField(
        "base URL",
        max_length=2048,
        help_text="The OpenAI-compatible base URL; requests go to {base URL}/chat/completions, "
        "e.g. http://127.0.0.1:11434/v1 (Ollama) or http://127.0.0.1:8000/v1 (vLLM).",
    )
    model = models.CharField(
        "model name", max_length=200, help_text="As the server knows it, e.g. llama3.1:8b."
    )
    api_key_env = models.CharField(
        "API key env",
        max_length=128,
        blank=True,
        help_text="The NAME of the environment variable holding the key, starting with KNOWLEDGEWEB_KEY_. "
        "Leave empty for a server that needs no key (Ollama, a local vLLM). The key is never stored.",
    )
    temperature = models.FloatField(default=0.2, help_text="0-2.")
    max_output_tokens = models.PositiveIntegerField(default=1024, help_text="1-32,768.")
    context_budget = models.PositiveIntegerField(
        default=24_000,
        help_text="Characters of evidence sent with each question (500-400,000); the oldest evidence "
        "is dropped first, and the answer's metadata says what was dropped.",
    )
    timeout = models.PositiveSmallIntegerField(
        default=60,
        help_text="Seconds for the whole answer, one deadline; at most KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING (60).",
    )
    users = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="answer_models")
    agent_names = models.JSONField(default=list, blank=True)
    # Web pages send no agent name, so agent names alone shut the browser out (bindings/access.py).
    browser_use = models.BooleanField(
        "usable in the browser",
        default=False,
        help_text="With agent names set, also let its users compose with it on the web pages (Ask), which "
        "send no agent name. Without agent names it is usable everywhere anyway.",
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "answer model"

    def __str__(self) -> str:
        return f"{self.name} ({self.model})"

    def clean(self) -> None:
        problems = answer_model_problems(**self.rule_fields())
        if problems:
            raise ValidationError(problems)

    def rule_fields(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "base_url": self.base_url,
            "model": self.model,
            "api_key_env": self.api_key_env,
            "temperature": self.temperature,
            "max_output_tokens": self.max_output_tokens,
            "context_budget": self.context_budget,
            "timeout": self.timeout,
            "agent_names": self.agent_names,
        }
