"""Admin: threads with their messages (read-only) and personal API tokens."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.cache import add_never_cache_headers
from django.utils.html import format_html

from knowledgeweb.threads.models import ApiToken, Message, Thread
from knowledgeweb.threads.services import token_create

# The raw token lives only on the request that created it, between save and response.
_ISSUED_ATTR = "_knowledgeweb_issued"


class MessageInline(admin.StackedInline):
    """Messages are immutable: shown, never edited, added or deleted here."""

    model = Message
    extra = 0
    can_delete = False
    ordering = ("seq",)
    fields = (
        "seq",
        "type",
        "name",
        "tool_call_id",
        "status",
        "content",
        "artifact_json",
        "tool_calls_json",
        "parts_json",
        "digest",
        "created_at",
    )
    readonly_fields = fields

    @admin.display(description="artifact")
    def artifact_json(self, message: Message) -> str:
        if message.artifact is None:
            return "—"
        return format_html("<pre>{}</pre>", json.dumps(message.artifact, indent=2, ensure_ascii=False))

    @admin.display(description="tool calls")
    def tool_calls_json(self, message: Message) -> str:
        return _json_or_dash(message.tool_calls)

    @admin.display(description="parts")
    def parts_json(self, message: Message) -> str:
        return _json_or_dash(message.parts)

    def has_add_permission(self, request: HttpRequest, obj: Thread | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Thread | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Thread | None = None) -> bool:
        return False


def _json_or_dash(value: Any) -> str:
    if not value:
        return "—"
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False))


@admin.register(Thread)
class ThreadAdmin(admin.ModelAdmin):
    list_display = ("title", "owner", "agent_name", "message_count", "updated_at")
    list_filter = ("agent_name",)
    search_fields = ("title", "owner__username", "agent_name")
    fields = ("id", "owner", "title", "agent_name", "created_at", "updated_at")
    readonly_fields = ("id", "owner", "created_at", "updated_at")
    inlines = (MessageInline,)

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Threads are created by their owners (API, web, import), never on someone's behalf here.
        return False


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "user", "name", "is_active", "created_at", "last_used_at")
    list_filter = ("is_active",)
    search_fields = ("user__username", "name", "prefix")
    raw_id_fields = ("user",)

    def get_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> tuple[str, ...]:
        if obj is None:
            return ("user", "name")
        return ("prefix", "user", "name", "is_active", "created_at", "last_used_at")

    def get_readonly_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> tuple[str, ...]:
        if obj is None:
            return ()
        return ("prefix", "user", "created_at", "last_used_at")

    def save_model(
        self, request: HttpRequest, obj: ApiToken, form: ModelForm[ApiToken], change: bool
    ) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        token, raw = token_create(user=obj.user, name=obj.name)
        # The admin goes on with ``obj`` (log entry, redirect): make it the stored row.
        obj.__dict__.update({k: v for k, v in token.__dict__.items() if k != "_state"})
        obj._state.adding = False
        obj._state.db = token._state.db
        setattr(request, _ISSUED_ATTR, raw)

    def response_add(self, request: HttpRequest, obj: ApiToken, post_url_continue: str | None = None) -> Any:
        raw = getattr(request, _ISSUED_ATTR, None)
        if raw is None:
            return super().response_add(request, obj, post_url_continue)
        context: dict[str, Any] = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "API token created",
            "token": obj,
            "raw_token": raw,
        }
        response: HttpResponse = TemplateResponse(
            request, "admin/threads/apitoken/token_created.html", context
        )
        # Shown once: never cached by the browser or a proxy.
        add_never_cache_headers(response)
        return response
