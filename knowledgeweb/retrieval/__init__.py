"""The retrieval service (docs/architecture.md#the-path-of-a-search): authorize -> adapter -> format -> budget -> append.

A plain package, not a Django app: it owns no models. Import the service from here.
"""

from knowledgeweb.retrieval.capabilities import BindingCapability, retrieval_capabilities
from knowledgeweb.retrieval.errors import (
    RetrievalError,
    RetrievalFailedError,
    RetrievalInvalidError,
    RetrievalRefusedError,
)
from knowledgeweb.retrieval.service import SearchOutcome, retrieval_record, retrieval_search

__all__ = [
    "BindingCapability",
    "RetrievalError",
    "RetrievalFailedError",
    "RetrievalInvalidError",
    "RetrievalRefusedError",
    "SearchOutcome",
    "retrieval_capabilities",
    "retrieval_record",
    "retrieval_search",
]
