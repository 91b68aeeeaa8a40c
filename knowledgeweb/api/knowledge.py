"""Server-side retrieval endpoints: capabilities and search."""

from ninja import Router

router = Router(tags=["knowledge"])
