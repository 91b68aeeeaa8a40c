from django.apps import AppConfig


class LibraryConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "knowledgeweb.library"
    label = "library"

    def ready(self) -> None:
        # The local index is a provider that needs Django: it registers itself here, so the
        # providers layer below never imports this app (docs/architecture.md, "Layers").
        from knowledgeweb.library.provider_spec import SPEC
        from knowledgeweb.providers.registry import provider_register

        provider_register(SPEC)
