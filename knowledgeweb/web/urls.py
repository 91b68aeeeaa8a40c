"""Reader-facing pages."""

from django.urls import path

from knowledgeweb.web import ask, compose, contents, documents, review, review_queue, views

app_name = "web"

urlpatterns = [
    path("", views.thread_list, name="thread-list"),
    path("threads/<uuid:thread_id>/", views.thread_detail, name="thread-detail"),
    # A tool message's hits, loaded when its summary is expanded (issue 25).
    path(
        "threads/<uuid:thread_id>/messages/<uuid:message_id>/hits/", views.message_hits, name="message-hits"
    ),
    path("threads/<uuid:thread_id>/delete/", views.thread_delete_confirm, name="thread-delete"),
    # Issue 26: review mode, verdict forms, the thread-scoped evidence of one citation.
    path("threads/<uuid:thread_id>/review/", review.review_mode, name="thread-review"),
    path("threads/<uuid:thread_id>/review/verdict/", review.verdict_post, name="thread-verdict"),
    path(
        "threads/<uuid:thread_id>/evidence/<uuid:message_id>/<int:n>/",
        review.citation_evidence,
        name="thread-evidence",
    ),
    # Issue 27: review queues, "Start reviewing", agreement and the lead's final verdicts.
    path("review/", review_queue.queue_list, name="review-queues"),
    path("review/<int:queue_id>/", review_queue.queue_detail, name="review-queue"),
    path("review/<int:queue_id>/start/", review_queue.queue_start, name="review-start"),
    path("review/<int:queue_id>/final/", review_queue.final_verdict_post, name="review-final"),
    path("ask/", ask.ask, name="ask"),
    path("messages/<uuid:message_id>/content/", contents.message_content, name="message-content"),
    # Issue 13: streamed answers and follow-ups (knowledgeweb.web.compose).
    path("ask/stream/", compose.ask_stream, name="ask-stream"),
    path("threads/<uuid:thread_id>/ask/", compose.thread_ask, name="thread-ask"),
    path("threads/<uuid:thread_id>/ask/stream/", compose.thread_ask_stream, name="thread-ask-stream"),
    # Evidence in its document: ?collection=<name>&digest=<sha256 hex> (library.passages.passage_path).
    path("library/passage/", documents.document_passage, name="document-passage"),
]
