"""Admin for answer models. Validation lives in the model's rules; the admin only shows it.

Like the binding admin, it says who can use each model before saving, asks before
saving one nobody can use, and tests the server with one tiny completion.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse

from knowledgeweb.bindings.access import serves_column
from knowledgeweb.bindings.access_form import AGENT_NAMES_HELP, AccessFormMixin
from knowledgeweb.bindings.admin_support import access_context, report_connection_test
from knowledgeweb.bindings.form_fields import LinesField
from knowledgeweb.bindings.rules import timeout_ceiling
from knowledgeweb.composer.connection_test import answer_model_connection_test
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.composer.rules import (
    CONTEXT_BUDGET_RANGE,
    KEY_ENV_PREFIX,
    MAX_TOKENS_RANGE,
    TIMEOUT_RANGE,
    key_env_problem,
)
from knowledgeweb.providers.credentials import key_env_is_set

WHO = "Who may use it"
SERVER = "Server"


class AnswerModelForm(AccessFormMixin):
    what = "answer model"

    agent_names = LinesField(required=False, help_text=AGENT_NAMES_HELP)

    class Meta:
        model = AnswerModel
        fields = [
            "name",
            "enabled",
            "base_url",
            "model",
            "api_key_env",
            "temperature",
            "max_output_tokens",
            "context_budget",
            "timeout",
            "users",
            "agent_names",
            "browser_use",
        ]
        widgets = {
            "temperature": forms.NumberInput(attrs={"min": 0, "max": 2, "step": "0.05"}),
            "max_output_tokens": forms.NumberInput(
                attrs={"min": MAX_TOKENS_RANGE[0], "max": MAX_TOKENS_RANGE[1]}
            ),
            "context_budget": forms.NumberInput(
                attrs={"min": CONTEXT_BUDGET_RANGE[0], "max": CONTEXT_BUDGET_RANGE[1]}
            ),
            "timeout": forms.NumberInput(attrs={"min": TIMEOUT_RANGE[0]}),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The ceiling is read at each form, so a changed setting shows at once.
        ceiling = timeout_ceiling()
        timeout = self.fields["timeout"]
        timeout.widget.attrs["max"] = ceiling
        timeout.help_text = (
            f"Seconds for the whole answer, one deadline: {TIMEOUT_RANGE[0]}-{ceiling} "
            "(KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING sets the most)."
        )


@admin.register(AnswerModel)
class AnswerModelAdmin(admin.ModelAdmin):
    form = AnswerModelForm
    list_display = ["name", "model", "base_url", "enabled", "serves", "timeout", "credential"]
    list_filter = ["enabled"]
    search_fields = ["name", "model", "base_url"]
    filter_horizontal = ["users"]
    readonly_fields = ["credential", "created_at", "updated_at"]
    actions = ["test_connection"]
    # The Save buttons come first, so Enter in a field saves rather than previews or tests.
    save_on_top = True
    fieldsets = [
        (None, {"fields": ["name", "enabled"]}),
        (SERVER, {"fields": ["base_url", "model", "api_key_env", "credential", "timeout"]}),
        ("Answers", {"fields": ["temperature", "max_output_tokens", "context_budget"]}),
        (WHO, {"fields": ["users", "agent_names", "browser_use"]}),
        ("History", {"fields": ["created_at", "updated_at"]}),
    ]

    class Media:
        js = ["knowledgeweb/admin_access.js"]
        css = {"all": ["knowledgeweb/admin.css"]}

    def get_queryset(self, request: HttpRequest) -> QuerySet[AnswerModel]:
        return super().get_queryset(request).annotate(user_count=Count("users", distinct=True))

    @admin.display(description="serves")
    def serves(self, obj: AnswerModel) -> str:
        count = getattr(obj, "user_count", None)
        return serves_column(
            user_count=obj.users.count() if count is None else int(count),
            agent_names=obj.agent_names,
            browser_use=obj.browser_use,
            enabled=obj.enabled,
        )

    @admin.display(description="credential in environment")
    def credential(self, obj: AnswerModel) -> str:
        # Says only whether the variable is set; its value is never shown.
        if not obj.api_key_env:
            return "no key (none needed)"
        if key_env_problem(obj.api_key_env) is not None:
            return f"refused: name a variable starting with {KEY_ENV_PREFIX}"  # never echo what was typed
        return "set" if key_env_is_set(obj.api_key_env) else f"{obj.api_key_env} is not set"

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: AnswerModel | None = None,
    ) -> HttpResponse:
        context.update(
            access_context(
                context["adminform"].form,
                who=WHO,
                connection=SERVER,
                tester=lambda model: answer_model_connection_test(model=model),
            )
        )
        return super().render_change_form(request, context, add, change, form_url, obj)

    @admin.action(description="Test connection of the selected answer models")
    def test_connection(self, request: HttpRequest, queryset: QuerySet[AnswerModel]) -> None:
        for model in queryset.order_by("name"):
            report_connection_test(
                request, f"Answer model '{model.name}'", answer_model_connection_test(model=model)
            )
