from django.apps import AppConfig


class BindingsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "knowledgeweb.bindings"
    label = "bindings"
