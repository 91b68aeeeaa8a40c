"""Admin for provider bindings. Validation lives in the model's rules; the admin only shows it.

Its pages say who can use each binding (``access_summary``), ask before saving one
that serves nobody, and test a saved binding's connection (docs/decisions/0040-admins-who-cannot-save-a-dead-configuration.md).
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse

from knowledgeweb.bindings.access import serves_column
from knowledgeweb.bindings.admin_support import access_context, report_connection_test
from knowledgeweb.bindings.connection_test import binding_connection_test
from knowledgeweb.bindings.forms import (
    FIELD_PROVIDERS,
    HOOKS,
    PROVIDER_FIELDS,
    SCOPE_PROVIDERS,
    TOOL_PROVIDERS,
    KnowledgeBindingForm,
)
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.selectors import binding_credential_is_set, binding_list_key_env_refused
from knowledgeweb.providers.credentials import ENV_NAME_PATTERN, KEY_ENV_PREFIX, key_env_problem
from knowledgeweb.providers.registry import mode_provider_labels, provider_spec

WHO = "Who may use it"
CONNECTION = "Connection"


@admin.register(KnowledgeBinding)
class KnowledgeBindingAdmin(admin.ModelAdmin):
    form = KnowledgeBindingForm
    list_display = ["name", "provider", "enabled", "serves", "documents", "scope", "timeout", "credential"]
    list_filter = ["provider", "enabled", "scope"]
    search_fields = ["name", "base_url"]
    filter_horizontal = ["users"]
    readonly_fields = ["credential", "created_at", "updated_at"]
    actions = ["test_connection"]
    # The Save buttons come first, so Enter in a field saves rather than previews or tests.
    save_on_top = True
    fieldsets = [
        (None, {"fields": ["name", "title", "description", "provider", "enabled"]}),
        (CONNECTION, {"fields": ["base_url", "api_key_env", "credential", "timeout"]}),
        (WHO, {"fields": ["users", "agent_names", "browser_use"]}),
        ("What it offers", {"fields": ["tools", "top_k", "scope", "selection", *PROVIDER_FIELDS]}),
        (f"{mode_provider_labels()} query modes", {"fields": ["query_modes", "default_mode"]}),
        ("History", {"fields": ["created_at", "updated_at"]}),
    ]

    class Media:
        js = ["knowledgeweb/admin_access.js"]
        css = {"all": ["knowledgeweb/admin.css"]}

    def get_queryset(self, request: HttpRequest) -> QuerySet[KnowledgeBinding]:
        return super().get_queryset(request).annotate(user_count=Count("users", distinct=True))

    @admin.display(description="serves")
    def serves(self, obj: KnowledgeBinding) -> str:
        count = getattr(obj, "user_count", None)
        return serves_column(
            user_count=obj.users.count() if count is None else int(count),
            agent_names=obj.agent_names,
            browser_use=obj.browser_use,
            enabled=obj.enabled,
        )

    @admin.display(description="documents")
    def documents(self, obj: KnowledgeBinding) -> str:
        for hooks in HOOKS:
            if hooks.provider == obj.provider:
                count = hooks.documents(obj)
                if count is not None:
                    return "none" if count == 0 else str(count)
        # A remote provider's documents are not counted here; "Test connection" asks it.
        return "— (remote)"

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: KnowledgeBinding | None = None,
    ) -> HttpResponse:
        form = context["adminform"].form
        context.update(
            access_context(
                form,
                who=WHO,
                connection=CONNECTION,
                tester=lambda binding: binding_connection_test(binding=binding),
                notes=form.binding_notes(),
            )
        )
        context["field_providers"] = json.dumps(
            {"fields": FIELD_PROVIDERS, "tools": TOOL_PROVIDERS, "scopes": SCOPE_PROVIDERS}
        )
        return super().render_change_form(request, context, add, change, form_url, obj)

    @admin.action(description="Test connection of the selected bindings")
    def test_connection(self, request: HttpRequest, queryset: QuerySet[KnowledgeBinding]) -> None:
        for binding in queryset.order_by("name"):
            report_connection_test(
                request, f"Binding '{binding.name}'", binding_connection_test(binding=binding)
            )

    @admin.display(description="credential in environment")
    def credential(self, obj: KnowledgeBinding) -> str:
        # Says only whether the variable is set; its value is never shown.
        if not obj.api_key_env:
            spec = provider_spec(obj.provider)
            return "not needed" if spec is not None and not spec.remote else "no variable named"
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
