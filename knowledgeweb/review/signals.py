"""A verdict written or deleted by any path (the review service, the admin, a cascade) raises
its thread's verdict revision: what a page reads to know whether, and which, verdicts to lay
over itself (decision 0110)."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from knowledgeweb.review.models import Verdict
from knowledgeweb.threads.services.pages import verdicts_changed


@receiver(post_save, sender=Verdict, dispatch_uid="knowledgeweb.review.verdict_saved")
def verdict_saved(sender: type[Verdict], instance: Verdict, **kwargs: Any) -> None:
    verdicts_changed(instance.thread_id)


@receiver(post_delete, sender=Verdict, dispatch_uid="knowledgeweb.review.verdict_deleted")
def verdict_deleted(sender: type[Verdict], instance: Verdict, **kwargs: Any) -> None:
    verdicts_changed(instance.thread_id)
