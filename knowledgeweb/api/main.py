"""The one ``NinjaAPI`` instance; routers are mounted here and nowhere else."""

from __future__ import annotations

from ninja import NinjaAPI

from knowledgeweb.api import knowledge, threads

api = NinjaAPI(
    title="knowledgeweb API",
    version="1",
    description="Threads, messages, citations and server-side retrieval.",
    docs_url="/docs",
    urls_namespace="api",
)

api.add_router("/threads", threads.router)
api.add_router("/knowledge", knowledge.router)
