"""Rendering one message at write: markdown -> sanitize -> resolve, tool views, panel entries (SPEC §8).

Renders are stored with the message (``MessageRender``) by the threads services;
reads only assemble them.
"""
