"""Admin for provider bindings. Validation lives in the model's rules; the admin only shows it."""

from __future__ import annotations

from django.contrib import admin

from knowledgeweb.bindings.forms import KnowledgeBindingForm
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.selectors import binding_credential_is_set


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
        ("What it offers", {"fields": ["tools", "top_k", "scope", "selection"]}),
        ("History", {"fields": ["created_at", "updated_at"]}),
    ]

    @admin.display(description="credential in environment")
    def credential(self, obj: KnowledgeBinding) -> str:
        # Says only whether the variable is set; its value is never shown.
        if not obj.api_key_env:
            return "not needed" if obj.provider == "local" else "no variable named"
        return "set" if binding_credential_is_set(binding=obj) else f"{obj.api_key_env} is not set"
