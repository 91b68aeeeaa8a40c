"""LLM answers over any OpenAI-compatible chat-completions server (issue 13).

An admin binds an *answer model* (base URL, model name, key variable, limits, who
it serves). A turn runs the search, sends the question, the conversation so far
and the thread's evidence to ``POST {base}/chat/completions`` with ``stream: true``,
and stores the answer exactly as written; every citation in it is then checked
against the thread's evidence (docs/decisions/0025-llm-composer.md).
"""
