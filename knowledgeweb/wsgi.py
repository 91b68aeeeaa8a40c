"""WSGI entry point."""

import os

from django.core.wsgi import get_wsgi_application

from knowledgeweb.chunked import ChunkedBodies

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "knowledgeweb.settings")

# Chunked request bodies are read when the server decoded them, refused with 411 otherwise.
application = ChunkedBodies(get_wsgi_application())
