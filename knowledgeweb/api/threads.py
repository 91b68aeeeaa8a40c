"""Thread, message, import, citation-report and export endpoints."""

from ninja import Router

router = Router(tags=["threads"])
