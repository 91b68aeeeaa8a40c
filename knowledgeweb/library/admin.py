"""Admin for local collections: browse documents and chunks; ingest runs from the command line."""

from __future__ import annotations

from django.contrib import admin
from django.db import models
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from knowledgeweb.library.models import Chunk, Collection, Document


@admin.register(Collection)
class CollectionAdmin(admin.ModelAdmin):
    list_display = ["name", "document_count", "created_at"]
    search_fields = ["name"]
    readonly_fields = ["created_at"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Collection]:
        return super().get_queryset(request).annotate(document_count=Count("documents"))

    @admin.display(ordering="document_count", description="documents")
    def document_count(self, obj: Collection) -> int:
        return int(getattr(obj, "document_count", 0))


class ChunkInline(admin.TabularInline):
    model = Chunk
    fields = ["ordinal", "page", "text"]
    readonly_fields = ["ordinal", "page", "text"]
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Document | None = None) -> bool:
        # Chunks come from ingest, so they always match their file.
        return False


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["title", "collection", "source_url", "updated_at"]
    list_filter = ["collection"]
    search_fields = ["title", "source_key"]
    readonly_fields = ["source_key", "content_hash", "created_at", "updated_at"]
    list_select_related = ["collection"]
    inlines = [ChunkInline]
    # Django 6 makes https the assumed scheme; opt in now rather than warn on every form.
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
