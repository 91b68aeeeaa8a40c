"""Retrieval provider adapters over one safe HTTP client factory (docs/providers.md).

Nothing in this package imports Django: adapters receive a ready ``Connection``
(base URL, timeout, the credential's header) and return contract types.
"""
