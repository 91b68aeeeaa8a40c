"""The project's URLs plus one page that fails, holding secrets in its frame, for the error-page tests."""

from __future__ import annotations

from django.db import OperationalError
from django.http import HttpRequest, HttpResponse
from django.urls import path

from knowledgeweb.urls import handler500
from knowledgeweb.urls import urlpatterns as project_urlpatterns

PROVIDER_URL = "https://svc-user:provider-pass-789@ragflow.example.test/api"


def explode(request: HttpRequest) -> HttpResponse:
    base_url = PROVIDER_URL  # a frame variable the DEBUG page lists
    raise RuntimeError(f"could not reach {base_url}")


def database_down(request: HttpRequest) -> HttpResponse:
    raise OperationalError(
        'connection failed: connection to server at "127.0.0.1", port 5432 failed: Connection refused'
    )


urlpatterns = [path("explode/", explode), path("database-down/", database_down), *project_urlpatterns]
__all__ = ["handler500", "urlpatterns"]
