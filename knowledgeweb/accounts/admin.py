"""Admin: personal API tokens, each shown once when issued."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.cache import add_never_cache_headers

from knowledgeweb.accounts.models import ApiToken
from knowledgeweb.accounts.services import token_create

# The raw token lives only on the request that created it, between save and response.
_ISSUED_ATTR = "_knowledgeweb_issued"


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
            request, "admin/accounts/apitoken/token_created.html", context
        )
        # Shown once: never cached by the browser or a proxy.
        add_never_cache_headers(response)
        return response
