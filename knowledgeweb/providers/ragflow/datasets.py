"""The datasets the key can see: names for display, embedding models for grouping."""

from __future__ import annotations

from dataclasses import dataclass

from knowledgeweb.providers.client import ProviderSession
from knowledgeweb.providers.errors import MalformedResponseError
from knowledgeweb.providers.ragflow.replies import ragflow_data

#: RAGFlow serves at most 100 datasets per page.
PAGE_SIZE = 100
#: A key that sees more datasets than this is refused rather than searched partially.
MAX_PAGES = 20


@dataclass(frozen=True)
class Dataset:
    id: str
    name: str | None
    embedding_model: str


def dataset_list(session: ProviderSession) -> list[Dataset]:
    """Every dataset visible to the key, in RAGFlow's order."""
    datasets: list[Dataset] = []
    for page in range(1, MAX_PAGES + 1):
        reply = session.get(
            "/api/v1/datasets", params={"page": page, "page_size": PAGE_SIZE}, action="dataset list request"
        )
        data = ragflow_data(reply, action="dataset list request")
        if not isinstance(data, list):
            raise MalformedResponseError("RAGFlow's dataset list is not a list.")
        for item in data:
            dataset = _dataset(item)
            if dataset is not None:
                datasets.append(dataset)
        if len(data) < PAGE_SIZE:
            return datasets
    raise MalformedResponseError(
        f"RAGFlow lists more than {PAGE_SIZE * MAX_PAGES} datasets for this key; "
        "select the datasets to search instead."
    )


def _dataset(item: object) -> Dataset | None:
    if not isinstance(item, dict):
        return None
    dataset_id = item.get("id")
    if not isinstance(dataset_id, str) or not dataset_id:
        return None
    name = item.get("name")
    model = item.get("embedding_model")
    return Dataset(
        id=dataset_id,
        name=name.strip() if isinstance(name, str) and name.strip() else None,
        embedding_model=model if isinstance(model, str) else "",
    )
