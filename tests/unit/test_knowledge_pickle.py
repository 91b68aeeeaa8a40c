"""The contract core's values survive a pickle round trip (they are cached).

That the core imports neither Django nor httpx, even inside a function, is the
``core`` contract of import-linter (pyproject.toml; tests/unit/test_import_layers.py).
"""

from __future__ import annotations


def test_evidence_survives_a_pickle_round_trip_unchanged() -> None:
    import pickle

    from knowledgeweb.knowledge import Evidence

    evidence = Evidence(
        handle="knowledge-" + "a" * 32 + "-1",
        form="native",
        id="a" * 32 + "-1",
        provider="ragflow",
        title="doc.pdf",
        excerpt="text",
        dataset_name="DS",
        url=None,
        pages=(2, 3),
        truncated=True,
        locators={"dataset_id": "d", "document_id": "doc", "chunk_id": "c"},
    )
    assert pickle.loads(pickle.dumps(evidence)) == evidence  # noqa: S301 - our own bytes
