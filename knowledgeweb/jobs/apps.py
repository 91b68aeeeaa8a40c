from django.apps import AppConfig
from django.conf import settings

from knowledgeweb.jobs.queue import broker_check
from knowledgeweb.ops.health import check_register


class JobsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "knowledgeweb.jobs"
    label = "jobs"

    def ready(self) -> None:
        # /readyz asks the task broker only while one is configured: without one, tasks run
        # in-process and there is nothing to ask. Ops imports no app, so the app registers it.
        check_register("broker", broker_check, enabled=lambda: bool(settings.TASK_BROKER_CONFIGURED))
