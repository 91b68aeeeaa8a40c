"""Precision and recall of the extractive composer's abstention on the labelled set.

    .venv/bin/python bench/abstention.py

Every question of ``tests/ask_labelled_set.py`` is asked through the one turn service (``turn_ask``)
over the demo corpus (``sample_corpus/documents`` in the local index), as the Ask page
asks it. Abstention is the positive class: precision is the share of abstentions that
were right (the question is unanswerable), recall the share of unanswerable questions
it abstained on. Counts only, no timing. Prints one verdict line per figure (bench/harness.py) and
exits non-zero when either misses its target.
"""

from __future__ import annotations

import sys

if __package__ in {None, ""}:
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))

from bench.harness import ROOT, finish, setup_django, verdict

#: Issue 23: both at least 0.9.
TARGET = 0.9


def main() -> int:
    setup_django()
    from django.contrib.auth.models import User

    from knowledgeweb.bindings.services import binding_create
    from knowledgeweb.composer.services import turn_ask
    from knowledgeweb.library.services.ingest import paths_ingest
    from knowledgeweb.threads.models import Thread
    from knowledgeweb.threads.selectors import thread_messages
    from tests.ask_labelled_set import ANSWERABLE, UNANSWERABLE, corpus_directory, score

    paths_ingest(collection_name="Sample corpus", paths=[corpus_directory(ROOT)], key_root=ROOT)
    user = User.objects.create_user("bench-asker")
    binding_create(name="demo", provider="local", tools=["knowledge_search"], users=[user])
    answers: dict[str, str] = {}
    for question in [q for q, _ in ANSWERABLE] + UNANSWERABLE:
        turn = turn_ask(user=user, question=question, binding_name="demo", rate_key=None)
        thread = Thread.objects.get(pk=turn.thread_id)
        answers[question] = thread_messages(thread=thread)[-1].content
    result = score(answers)
    print(
        f"  {len(ANSWERABLE)} answerable and {len(UNANSWERABLE)} unanswerable questions over the demo corpus"
    )
    for label, questions in (
        ("abstained on an answerable question", result.wrong_abstentions),
        ("answered an unanswerable question", result.wrong_answers),
        ("answered without quoting the expected sentence", result.off_target),
    ):
        for question in questions:
            print(f"    {label}: {question}")
    verdict("abstention: precision on the labelled set", result.precision, TARGET, compare=">=")
    verdict("abstention: recall on the labelled set", result.recall, TARGET, compare=">=")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
