"""/api/docs renders in a real browser, offline and under the site's CSP (issue 22, defect 13).

django-ninja serves Swagger UI from its own static files when ``ninja`` is an installed
app (no CDN), and starts it from a script file that reads its settings from a JSON data
block, so the policy's ``script-src 'self'`` needs no exception. The page failed with
"Parser error: duplicated mapping key" while an operation declared its 429 twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, Route, expect

from knowledgeweb.api.main import api
from tests.e2e.watching import Watched

pytestmark = pytest.mark.e2e

OpenPage = Callable[..., tuple[Page, Watched]]


def test_the_api_docs_render_every_operation_offline_with_no_csp_violation(
    live_server: Any, reader: tuple[User, Any], open_page: OpenPage
) -> None:
    own = urlsplit(live_server.url).netloc
    elsewhere: list[str] = []

    def offline(route: Route) -> None:
        if urlsplit(route.request.url).netloc == own:
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page, watched = open_page("about:blank")
    page.route("**/*", offline)
    page.goto("/api/docs")

    operations = page.locator(".opblock")
    expect(operations.filter(has_text="List your threads")).to_be_visible()
    expect(operations.filter(has_text="Ask a follow-up question in a thread")).to_be_visible()
    expect(operations.filter(has_text="Run a retrieval tool")).to_be_visible()
    # One block per operation the OpenAPI document declares: none failed to render.
    declared = sum(
        method in {"get", "post", "put", "patch", "delete"}
        for path in api.get_openapi_schema()["paths"].values()
        for method in path
    )
    assert declared >= 11
    assert operations.count() == declared
    expect(page.get_by_text("Parser error")).to_have_count(0)
    # Every asset came from this server, and nothing was refused by the policy.
    assert elsewhere == []
    assert watched.errors == []
    assert watched.dialogs == []
