from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The one-command demo. An app only so that ``manage.py demo`` is found; it has no models."""

    name = "knowledgeweb.demo"
    label = "demo"
