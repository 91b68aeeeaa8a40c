"""Interchange: what comes into a thread from other tools and what goes out of it.

``shapes`` reads agent frameworks' thread JSON into message fields, ``imports`` writes a whole
thread from it (through the threads services), ``export`` and ``markdown`` export a thread as
JSON or Markdown (through the selectors, from the stored renders). The store below never
imports this package (the ``threads`` and ``store`` contracts in ``pyproject.toml``).
"""
