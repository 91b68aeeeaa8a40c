"""The upload form: a collection and one or many files, each checked before anything is stored."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.files.uploadedfile import UploadedFile as DjangoUploadedFile

from knowledgeweb.jobs.services import UploadedFile, upload_too_large, uploads_problems
from knowledgeweb.library.models import Collection
from knowledgeweb.library.services.ingest import MAX_FILE_BYTES


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one field (Django's documented way: a widget that allows it)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault(
            "widget", MultipleFileInput(attrs={"accept": ".md,.markdown,.txt,.text,.html,.htm,.pdf"})
        )
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[DjangoUploadedFile]:
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(d, initial) for d in data]
        return [single(data, initial)]


def _read_bounded(file: DjangoUploadedFile) -> bytes:
    """At most the limit plus one byte: enough to tell a file too large without holding all of it."""
    file.seek(0)
    return file.read(MAX_FILE_BYTES + 1)


class UploadForm(forms.Form):
    collection = forms.ModelChoiceField(queryset=Collection.objects.all())
    documents = MultipleFileField(
        help_text="Markdown, text, HTML or PDF files. Each becomes a document, extracted and "
        "chunked as manage.py ingest does; a file that cannot be is named with why, and nothing "
        "of the upload is stored."
    )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        collection, files = cleaned.get("collection"), cleaned.get("documents")
        if collection is None or not files:
            return cleaned
        # A file Django already counted too large is refused unread (it waits on disk, not in memory).
        big = [f for f in files if (f.size or 0) > MAX_FILE_BYTES]
        read = [UploadedFile(name=f.name or "unnamed", data=_read_bounded(f)) for f in files if f not in big]
        problems = uploads_problems(collection=collection, files=read)
        problems += [(f.name or "unnamed", upload_too_large()) for f in big]
        for name, problem in problems:
            self.add_error("documents", f"{name}: {problem}")
        cleaned["read"] = read
        return cleaned
