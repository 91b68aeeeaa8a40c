"""Admin for provider bindings. Validation lives in the model's rules; the admin only shows it."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse

from knowledgeweb.bindings.forms import KnowledgeBindingForm
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.selectors import binding_credential_is_set, binding_list_key_env_refused
from knowledgeweb.providers.credentials import ENV_NAME_PATTERN, KEY_ENV_PREFIX, key_env_problem


@admin.register(KnowledgeBinding)
class KnowledgeBindingAdmin(admin.ModelAdmin):
    form = KnowledgeBindingForm
    list_display = ["name", "provider", "enabled", "scope", "top_k", "timeout", "credential"]
    list_filter = ["provider", "enabled", "scope"]
    search_fields = ["name", "base_url"]
    filter_horizontal = ["users"]
    readonly_fields = ["credential", "created_at", "updated_at"]
    fieldsets = [
        (None, {"fields": ["name", "title", "description", "provider", "enabled"]}),
        ("Connection", {"fields": ["base_url", "api_key_env", "credential", "timeout"]}),
        ("Who may use it", {"fields": ["users", "agent_names"]}),
        ("What it offers", {"fields": ["tools", "top_k", "scope", "selection", "collections"]}),
        ("LightRAG query modes", {"fields": ["query_modes", "default_mode"]}),
        ("History", {"fields": ["created_at", "updated_at"]}),
    ]

    @admin.display(description="credential in environment")
    def credential(self, obj: KnowledgeBinding) -> str:
        # Says only whether the variable is set; its value is never shown.
        if not obj.api_key_env:
            return "not needed" if obj.provider == "local" else "no variable named"
        if key_env_problem(obj.api_key_env) is not None:
            return f"refused: rename to {KEY_ENV_PREFIX}…"
        return "set" if binding_credential_is_set(binding=obj) else f"{obj.api_key_env} is not set"

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        _warn_refused_key_variables(request)
        return super().changelist_view(request, extra_context)

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        if request.method == "GET":
            _warn_refused_key_variables(request)
        return super().change_view(request, object_id, form_url, extra_context)


def _warn_refused_key_variables(request: HttpRequest) -> None:
    """Say which bindings lost their key variable to the prefix rule, and what to rename.

    Such bindings were disabled by a migration, never renamed: renaming the variable
    the admin named would silently break a running deployment's environment.
    """
    for binding in binding_list_key_env_refused():
        state = "disabled" if not binding.enabled else "enabled but refused at every use"
        if ENV_NAME_PATTERN.fullmatch(binding.api_key_env):
            # The stored value passed the old name rule, so it is a name, not a pasted key.
            what = f"its key variable {binding.api_key_env} does not start with {KEY_ENV_PREFIX}"
            rename = f"rename it in your environment to e.g. {KEY_ENV_PREFIX}{binding.api_key_env}"[:200]
        else:
            what, rename = (
                "its key variable is not a valid name",
                f"name a variable starting with {KEY_ENV_PREFIX}",
            )
        messages.warning(
            request,
            f"Binding '{binding.name}' is {state}: {what}. To use it again, {rename}, enter the new name "
            "in 'API key env', and enable the binding.",
        )
