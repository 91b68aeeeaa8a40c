from django.apps import AppConfig


class ReviewConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "knowledgeweb.review"
    label = "review"

    def ready(self) -> None:
        # Connects the receivers that keep each thread's verdict revision.
        from knowledgeweb.review import signals  # noqa: F401
