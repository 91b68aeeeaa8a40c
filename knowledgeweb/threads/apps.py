from django.apps import AppConfig


class ThreadsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "knowledgeweb.threads"
    label = "threads"

    def ready(self) -> None:
        from knowledgeweb.threads import signals  # noqa: F401  (connects the deletion receiver)
