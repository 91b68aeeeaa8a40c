"""Admin for local collections: browse documents and chunks, add a document by pasting its text.

Files are ingested from the command line (manage.py ingest) or uploaded under Jobs (the
jobs app's admin, which runs the same ingest as a task); a document added here
must have text, which is chunked as ingest chunks a text file: a title alone
would be a document no search can ever find.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db import models
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from knowledgeweb.library.models import Chunk, Collection, Document
from knowledgeweb.library.services.documents import NO_TEXT, document_add_text, pasted_source_key


class DocumentAddForm(forms.ModelForm):
    """Adding a document: its text is required (and chunked at save); the key and hash are derived."""

    text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 16}),
        strip=True,
        error_messages={"required": NO_TEXT},
        help_text="The document's text, paragraphs separated by blank lines. It is split into searchable "
        "chunks as manage.py ingest splits a text file. To add files (Markdown, text, HTML, PDF), "
        "upload them under Jobs: Add job.",
    )

    # Django 6 makes https the assumed scheme; opt in now rather than warn on every form.
    source_url = forms.URLField(max_length=2048, required=False, assume_scheme="https")

    class Meta:
        model = Document
        fields = ["collection", "title", "source_url"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        text, collection = cleaned.get("text"), cleaned.get("collection")
        if text and collection is not None:
            same = Document.objects.filter(collection=collection, source_key=pasted_source_key(text)).first()
            if same is not None:
                self.add_error("text", f"This collection already holds this text, as '{same.title}'.")
        return cleaned


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

    def get_form(
        self, request: HttpRequest, obj: Document | None = None, change: bool = False, **kwargs: Any
    ) -> Any:
        if obj is None:
            kwargs["form"] = DocumentAddForm
            kwargs["fields"] = ["collection", "title", "source_url", "text"]
        return super().get_form(request, obj, change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: Document | None = None) -> Any:
        if obj is None:
            return ["collection", "title", "source_url", "text"]
        return super().get_fields(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: Document | None = None) -> Any:
        return [] if obj is None else self.readonly_fields

    def get_inlines(self, request: HttpRequest, obj: Document | None) -> Any:
        # A new document's chunks come from its text; there is nothing to list yet.
        return [] if obj is None else self.inlines

    def save_model(self, request: HttpRequest, obj: Document, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        # The form checked what the service checks, so a refusal here is a race: it writes nothing.
        result = document_add_text(
            collection=form.cleaned_data["collection"],
            title=form.cleaned_data["title"],
            source_url=form.cleaned_data.get("source_url") or "",
            text=form.cleaned_data["text"],
        )
        obj.pk = result.document.pk
        obj.source_key = result.document.source_key
        obj.content_hash = result.document.content_hash
