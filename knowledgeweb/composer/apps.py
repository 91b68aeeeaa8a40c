from django.apps import AppConfig


class ComposerConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "knowledgeweb.composer"
    label = "composer"
    verbose_name = "answer models"
