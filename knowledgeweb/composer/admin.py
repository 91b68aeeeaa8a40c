"""Admin for answer models. Validation lives in the model's rules; the admin only shows it."""

from __future__ import annotations

import os
from typing import Any

from django import forms
from django.contrib import admin

from knowledgeweb.bindings.forms import LinesField
from knowledgeweb.bindings.rules import timeout_ceiling
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.composer.rules import CONTEXT_BUDGET_RANGE, MAX_TOKENS_RANGE, TIMEOUT_RANGE


class AnswerModelForm(forms.ModelForm):
    agent_names = LinesField(
        required=False, help_text="One exact agent name per line. Leave empty to allow any agent name."
    )

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
        self.fields["timeout"].widget.attrs["max"] = timeout_ceiling()


@admin.register(AnswerModel)
class AnswerModelAdmin(admin.ModelAdmin):
    form = AnswerModelForm
    list_display = ["name", "model", "base_url", "enabled", "timeout", "credential"]
    list_filter = ["enabled"]
    search_fields = ["name", "model", "base_url"]
    filter_horizontal = ["users"]
    readonly_fields = ["credential", "created_at", "updated_at"]
    fieldsets = [
        (None, {"fields": ["name", "enabled"]}),
        ("Server", {"fields": ["base_url", "model", "api_key_env", "credential", "timeout"]}),
        ("Answers", {"fields": ["temperature", "max_output_tokens", "context_budget"]}),
        ("Who may use it", {"fields": ["users", "agent_names"]}),
        ("History", {"fields": ["created_at", "updated_at"]}),
    ]

    @admin.display(description="credential in environment")
    def credential(self, obj: AnswerModel) -> str:
        # Says only whether the variable is set; its value is never shown.
        if not obj.api_key_env:
            return "no key (none needed)"
        return "set" if (os.environ.get(obj.api_key_env) or "").strip() else f"{obj.api_key_env} is not set"
