"""Write side of the threads app. Import services from here."""

from knowledgeweb.threads.services.messages import message_append, message_build, message_digest
from knowledgeweb.threads.services.threads import thread_create, thread_delete

__all__ = [
    "message_append",
    "message_build",
    "message_digest",
    "thread_create",
    "thread_delete",
]
