"""The render pipeline for thread pages: markdown -> sanitize -> resolve citations (SPEC §8)."""
