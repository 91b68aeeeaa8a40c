"""Reader-facing pages."""

from django.urls import path

from knowledgeweb.web import ask, contents, views

app_name = "web"

urlpatterns = [
    path("", views.thread_list, name="thread-list"),
    path("threads/<uuid:thread_id>/", views.thread_detail, name="thread-detail"),
    path("threads/<uuid:thread_id>/delete/", views.thread_delete_confirm, name="thread-delete"),
    path("ask/", ask.ask, name="ask"),
    path("messages/<uuid:message_id>/content/", contents.message_content, name="message-content"),
]
