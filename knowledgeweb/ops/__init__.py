"""Operating the app in production: probes, rate limits, request logs, JSON API errors,
redaction of secrets, a cache that degrades, and the gunicorn configuration.

It sits beside the web and API layers: they call into it (a rate-limit hook, the
client address), it imports nothing of theirs.
"""
