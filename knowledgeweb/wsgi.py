"""WSGI entry point."""

import os

from django.core.wsgi import get_wsgi_application

from knowledgeweb.chunked import ChunkedBodies
from knowledgeweb.ops.requestlog import log_refused, request_id_for

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "knowledgeweb.settings")

# Chunked request bodies are read when the server decoded them, refused with 411 otherwise;
# a refusal keeps the caller's request id (when well formed) and writes the request log line.
application = ChunkedBodies(get_wsgi_application(), request_ids=request_id_for, on_refused=log_refused)
