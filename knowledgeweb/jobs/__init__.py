"""Long work as jobs: uploaded documents to ingest and threads to re-render, run by Celery workers."""
