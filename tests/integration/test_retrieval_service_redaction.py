"""The retrieval service redacts every hit again, whatever its adapter did (defence in depth)."""

from __future__ import annotations

from knowledgeweb.knowledge import RetrievalHit, RetrievalResult
from knowledgeweb.providers.redaction import Redactor
from knowledgeweb.retrieval.service import _redacted

KEY = "kwkey-0123456789abcdef"


def test_a_hit_echoing_the_key_is_redacted_in_every_text_field_and_a_clean_hit_is_kept() -> None:
    leaky = RetrievalHit(
        text=f"text {KEY}",
        title=f"title {KEY}",
        dataset_name=f"set {KEY}",
        url=f"https://x.example/?k={KEY}",
        entity_type=f"type {KEY}",
        source_entity=f"from {KEY}",
        target_entity=f"to {KEY}",
    )
    clean = RetrievalHit(text="nothing secret", title="Handbook", url="https://x.example/a")
    result = RetrievalResult(provider="lightrag", query=f"q {KEY}", hits=(leaky, clean))

    redacted = _redacted(result, Redactor([KEY]))

    assert KEY not in redacted.model_dump_json()
    first = redacted.hits[0]
    assert first.text == "text [redacted]"
    assert first.title == "title [redacted]"
    assert first.dataset_name == "set [redacted]"
    assert first.url == "https://x.example/?k=[redacted]"
    assert (first.entity_type, first.source_entity, first.target_entity) == (
        "type [redacted]",
        "from [redacted]",
        "to [redacted]",
    )
    assert redacted.query == "q [redacted]"
    # Nothing to remove: the same hit, not a copy.
    assert redacted.hits[1] is clean
    # The adapter's own result is left as it was.
    assert result.hits[0].text == f"text {KEY}"
