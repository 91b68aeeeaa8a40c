"""The review queues' admin: an admin creates a queue (name, description, guidelines), names its
reviewers and lead, and what enters it (threads owned by given users, optionally narrowed by
agent name). Verdicts are shown read-only: they are append-only history."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from knowledgeweb.review.models import QueueThread, ReviewQueue, Verdict


class ReviewQueueForm(forms.ModelForm):
    """Agent names as one name per line: exact names that only ever narrow the owners' threads."""

    agent_names = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="One exact agent name per line, or none for every thread of the owners. Agent "
        "names are self-declared by whoever writes a thread, so they only narrow, never grant.",
    )

    class Meta:
        model = ReviewQueue
        fields = [
            "name",
            "description",
            "guidelines",
            "reviewers",
            "lead",
            "owners",
            "agent_names",
            "overlap",
        ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        names = self.instance.agent_names if isinstance(self.instance.agent_names, list) else []
        self.initial["agent_names"] = "\n".join(str(n) for n in names)

    def clean_agent_names(self) -> list[str]:
        raw = str(self.cleaned_data.get("agent_names") or "")
        names = list(dict.fromkeys(line.strip() for line in raw.splitlines() if line.strip()))
        if any(len(name) > 100 for name in names):
            raise forms.ValidationError("An agent name holds at most 100 characters.")
        return names


class QueueThreadInline(admin.TabularInline):
    model = QueueThread
    extra = 0
    raw_id_fields = ("thread", "added_by")
    readonly_fields = ("added_at",)


@admin.register(ReviewQueue)
class ReviewQueueAdmin(admin.ModelAdmin):
    form = ReviewQueueForm
    list_display = ("name", "lead", "created_at")
    search_fields = ("name", "description")
    filter_horizontal = ("reviewers", "owners")
    inlines = [QueueThreadInline]


@admin.register(Verdict)
class VerdictAdmin(admin.ModelAdmin):
    list_display = ("created_at", "reviewer", "kind", "position", "value", "thread")
    list_filter = ("kind", "value")
    search_fields = ("reviewer__username", "note")
    readonly_fields = [f.name for f in Verdict._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Verdict | None = None) -> bool:
        return False
