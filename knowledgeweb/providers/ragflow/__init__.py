"""RAGFlow adapter: document search over the datasets a key can see."""

from knowledgeweb.providers.ragflow.adapter import CAPABILITIES, RagflowProvider, ragflow_connection
from knowledgeweb.providers.ragflow.scope import MAX_SELECTED_DOCUMENTS, DatasetSelection

__all__ = [
    "CAPABILITIES",
    "MAX_SELECTED_DOCUMENTS",
    "DatasetSelection",
    "RagflowProvider",
    "ragflow_connection",
]
