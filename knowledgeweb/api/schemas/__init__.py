"""The API's schemas, in one home: what every operation reads and answers.

``errors`` (the one error body, and the two whose fields differ), ``text`` (storable text and JSON
field types), ``threads`` (threads, messages and citation reports out, the list's query),
``messages`` (a caller's message in), ``imports`` (the import body's description), ``knowledge``
(capabilities and search), ``ask`` (a follow-up question) and ``review`` (review items, verdicts
and review queues). The routers (``api/threads.py``, ``api/knowledge.py``...) hold the operations.
"""
