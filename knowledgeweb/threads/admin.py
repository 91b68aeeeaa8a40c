"""Admin: threads with their messages (read-only)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from knowledgeweb.threads.models import Message, Thread


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
    list_display = ("title", "owner", "agent_name", "message_count", "updated_at", "viewer")
    list_filter = ("agent_name",)
    search_fields = ("title", "owner__username", "agent_name")
    fields = ("id", "viewer", "owner", "title", "agent_name", "created_at", "updated_at")
    readonly_fields = ("id", "viewer", "owner", "created_at", "updated_at")
    inlines = (MessageInline,)

    @admin.display(description="viewer")
    def viewer(self, thread: Thread) -> str:
        # The citation viewer's page of this thread: read-only for an admin who is not its owner.
        url = reverse("web:thread-detail", args=[thread.id])
        return format_html('<a href="{}" data-viewer-link>Open in the viewer</a>', url)

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Threads are created by their owners (API, web, import), never on someone's behalf here.
        return False
