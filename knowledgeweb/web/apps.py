from django.apps import AppConfig


class WebConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "knowledgeweb.web"
    label = "web"

    def ready(self) -> None:
        # The page assembly stores a thread's last window with every write that changes it,
        # and lays every verdict over it with every verdict written.
        from knowledgeweb.threads.signals import thread_judged, thread_rendered
        from knowledgeweb.web.rendering.receivers import store_judged, store_last_window

        thread_rendered.connect(store_last_window, dispatch_uid="knowledgeweb.web.store_last_window")
        thread_judged.connect(store_judged, dispatch_uid="knowledgeweb.web.store_judged")
