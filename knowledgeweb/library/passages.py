"""A passage of the local index named without a document id: its collection and its text's digest.

Evidence shared in a thread carries no document id (docs/contract.md), but a local
hit's excerpt is a whole chunk, so the SHA-256 of the excerpt names the chunk it
came from. ``text_digest`` is the one definition of that digest: ingest stores it
with every chunk, the migration that added it backfilled it, and ``passage_path``
puts it in the link of "Open in document" (docs/decisions/0026-evidence-in-its-document.md).
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import urlencode

from django.urls import reverse

#: What a digest looks like in a URL: 64 lowercase hex digits, nothing else.
DIGEST_PATTERN = re.compile(r"[0-9a-f]{64}")
#: The element the document page wraps the passage in; the link scrolls to it.
PASSAGE_ANCHOR = "passage"


def text_digest(text: str) -> str:
    """SHA-256 hex of ``text`` as UTF-8.

    ``surrogatepass`` so that any string has a digest: an excerpt read from JSON may
    hold a lone surrogate, which no stored chunk holds, so its digest simply matches nothing.
    """
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def is_digest(value: str) -> bool:
    return DIGEST_PATTERN.fullmatch(value) is not None


def passage_page() -> str:
    """The path of the page that shows a passage in its document (without query or anchor)."""
    return reverse("web:document-passage")


def passage_path(*, collection_name: str, excerpt: str, page: str | None = None) -> str:
    """The path, query and anchor of the page that shows ``excerpt`` in its document.

    The page answers 404 unless the reader may read the collection and an identical
    chunk is stored there; a shortened excerpt (ending in `` […]``) never matches.
    ``page`` is ``passage_page()`` when the caller has it already: a tool message's panel
    entries name up to a hundred passages, and each ``reverse`` costs more than the rest.
    """
    # surrogatepass: a name no collection can have still makes a link (to a 404), never an error.
    query = urlencode({"collection": collection_name, "digest": text_digest(excerpt)}, errors="surrogatepass")
    return f"{passage_page() if page is None else page}?{query}#{PASSAGE_ANCHOR}"
