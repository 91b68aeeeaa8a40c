"""Reader-facing views: thin, they call selectors and render templates."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def thread_list(request: HttpRequest) -> HttpResponse:
    return render(request, "web/home.html")
