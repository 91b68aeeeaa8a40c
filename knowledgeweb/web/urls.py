"""Reader-facing pages."""

from django.urls import path

from knowledgeweb.web import ask, views

app_name = "web"

urlpatterns = [
    path("", views.thread_list, name="thread-list"),
    path("ask/", ask.ask, name="ask"),
]
