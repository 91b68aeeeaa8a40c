"""Rendering one message at write: markdown -> sanitize -> resolve, tool views, panel entries (docs/architecture.md#pages-and-dom-hooks).

Renders are stored with the message (``MessageRender``) by the threads services;
reads only assemble them.
"""
