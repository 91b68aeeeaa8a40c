"""What the binding and answer-model admins share: the access summary's context and connection reports."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.contrib import messages
from django.http import HttpRequest

from knowledgeweb.bindings.access_form import AccessFormMixin
from knowledgeweb.bindings.connection_test import ConnectionTestResult


def access_context(
    form: AccessFormMixin,
    *,
    who: str,
    connection: str,
    tester: Callable[[Any], ConnectionTestResult],
    notes: Iterable[str] = (),
) -> dict[str, Any]:
    """Template context: the summary (after fieldset ``who``), the connection test (after
    ``connection``, run with ``tester`` on the unsaved instance when asked), the preview, the confirmation."""
    context: dict[str, Any] = {
        "access_summary": form.access_summary(notes=notes),
        "access_fieldset": who,
        "connection_fieldset": connection,
        "access_what": form.what,
        "access_preview": False,
        "confirm_needed": False,
    }
    if not form.is_bound:
        return context
    if form.held_for_preview_only:
        # A preview is not a failed save: no "Please correct the error below".
        context["errors"] = []
        context["access_preview"] = not form.wants_connection_test
    context["confirm_needed"] = form.needs_confirmation and not form.is_preview
    if form.wants_connection_test:
        if form.ready_to_test:
            context["connection_test"] = tester(form.instance)
        else:
            context["connection_test"] = ConnectionTestResult(
                "not_tested", "Correct the errors below first; no request was sent."
            )
    return context


def report_connection_test(request: HttpRequest, label: str, result: ConnectionTestResult) -> None:
    """One admin message: success, or the error code and its plain message (never the key)."""
    if result.ok:
        messages.success(request, f"{label}: connection test passed. {result.message}")
    else:
        messages.error(request, f"{label}: connection test failed [{result.code}]. {result.message}")
