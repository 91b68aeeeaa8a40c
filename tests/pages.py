"""Reading a thread page as a reader does: the window, then each tool message's hits, which the
page loads when the message is expanded (issue 25: ``web:message-hits``)."""

from __future__ import annotations

import re

from django.test import Client

_HITS = re.compile(r'data-tool-hits="([^"]+)"')
_BODY = re.compile(r"<div[^>]*data-tool-hits-body>(.*)</div>\s*</main>", re.S)


def with_hits(client: Client, html: str) -> str:
    """``html`` (a thread page) followed by the hits of each tool message it summarizes (the
    hits page's body: what the page's script puts into the expanded message)."""
    parts = [html]
    for url in _HITS.findall(html):
        response = client.get(url)
        assert response.status_code == 200, url
        body = _BODY.search(response.content.decode())
        assert body is not None, url
        parts.append(body.group(1))
    return "".join(parts)
