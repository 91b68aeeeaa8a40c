"""The Ask page: question -> retrieval -> composed answer -> new thread."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def ask(request: HttpRequest) -> HttpResponse:
    return render(request, "web/home.html")
