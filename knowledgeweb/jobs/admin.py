"""Admin for jobs: upload documents (an ingest job), start a re-render, watch progress, resume."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from knowledgeweb.jobs.forms import UploadForm
from knowledgeweb.jobs.models import Job, Upload
from knowledgeweb.jobs.services import rerender_job_create, uploads_job_create
from knowledgeweb.jobs.tasks import job_enqueue, job_resume


class UploadInline(admin.TabularInline):
    model = Upload
    fields = ["ordinal", "name", "size", "state", "problem", "document", "source_key", "action"]
    readonly_fields = ["ordinal", "name", "size", "state", "problem", "document", "source_key", "action"]
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["__str__", "state", "collection", "progress", "heartbeat_at", "attempts", "created_at"]
    list_filter = ["kind", "state"]
    readonly_fields = [
        "kind",
        "state",
        "collection",
        "force",
        "total",
        "done",
        "failed",
        "lease_owner",
        "lease_expires_at",
        "heartbeat_at",
        "attempts",
        "message",
        "created_at",
        "finished_at",
    ]
    exclude = ["cursor"]
    inlines = [UploadInline]
    actions = ["resume_stalled"]

    @admin.display(description="progress")
    def progress(self, obj: Job) -> str:
        failed = f", {obj.failed} failed" if obj.failed else ""
        return f"{obj.done} of {obj.total} done{failed}"

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # A job's row is written by its worker only.
        return False

    def get_urls(self) -> list[Any]:
        from django.urls import path

        extra = [
            path("rerender/", self.admin_site.admin_view(self.rerender_view), name="jobs_job_rerender"),
        ]
        return extra + super().get_urls()

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: Any = None) -> HttpResponse:
        """The upload form: "Add job" uploads documents into a collection."""
        if not self.has_add_permission(request):
            return HttpResponse(status=403)
        form = UploadForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            with transaction.atomic():
                job = uploads_job_create(
                    collection=form.cleaned_data["collection"], files=form.cleaned_data["read"]
                )
                job_enqueue(job)
            job.refresh_from_db()
            self._report(request, job)
            return HttpResponseRedirect(reverse("admin:jobs_job_change", args=[job.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": "Upload documents",
            "form": form,
            "opts": self.model._meta,
            "rerender_url": reverse("admin:jobs_job_rerender"),
        }
        return TemplateResponse(request, "admin/jobs/upload.html", context)

    def rerender_view(self, request: HttpRequest) -> HttpResponse:
        if request.method != "POST" or not self.has_add_permission(request):
            return HttpResponse(status=405)
        with transaction.atomic():
            job = rerender_job_create(force=request.POST.get("force") == "1")
            job_enqueue(job)
        job.refresh_from_db()
        self._report(request, job)
        return HttpResponseRedirect(reverse("admin:jobs_job_change", args=[job.pk]))

    def _report(self, request: HttpRequest, job: Job) -> None:
        """What the admin sees at once: the outcome (in-process) or that the job is queued."""
        if job.state == Job.State.QUEUED:
            self.message_user(request, f"{job} is queued; this page shows its progress.", messages.INFO)
            return
        self.message_user(request, f"{job}: {self.progress(job)}.", messages.SUCCESS)
        for upload in job.uploads.filter(state=Upload.State.FAILED):
            # Not capitalised by the admin: a file's name stays as it was given.
            self.message_user(request, f"Not stored: {upload.name}: {upload.problem}", messages.ERROR)

    @admin.action(description="Resume the selected stalled jobs (their lease ran out)")
    def resume_stalled(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        resumed = sum(1 for job in queryset if job_resume(job))
        self.message_user(request, f"{resumed} job(s) sent to the queue again.", messages.INFO)
