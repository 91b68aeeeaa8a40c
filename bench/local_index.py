"""Local index: ``LocalProvider.search`` against a raw FTS5 query, at 1k, 10k and 100k chunks.

Both sides search the same ``library_chunk_fts`` table for the same terms in
the same run:

- raw:   ``SELECT rowid, bm25(...) ... MATCH ? ORDER BY rank LIMIT 20`` on the
         connection, rows fetched, nothing else
- local: the provider the retrieval service uses: term extraction, the ranked
         query joined to chunks, documents and collections, and the
         ``RetrievalResult`` it returns

The corpus is synthetic: words drawn from a Zipf-like distribution over a
5,000-word vocabulary, 100 chunks of about 60 words per document.

Each timed sample runs the queries ``SAMPLE_PASSES[size]`` times over (both sides
alike; the times shown are per pass). At 1k chunks one pass of the raw side takes
under 2 ms, shorter than one scheduler time slice: on the shared 2-core machine a
sample was either ~2 ms or ~6 ms (one preemption, a whole 4 ms slice), and as a
round of both sides lasts about one slice, the preemption landed on the same side
round after round, so the median over the rounds kept it: the same code measured
from 0.37 to 3.8 at 1k chunks in six runs. A sample many slices long takes such
preemptions on either side in proportion to its work, which is what the ratio is
meant to compare.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable

if __package__ in {None, ""}:
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))

from bench.harness import finish, interleaved_medians, setup_django, show_ratio, show_time

SIZES = (1_000, 10_000, 100_000)
# Passes of all the queries per timed sample, so that every sample lasts tens of ms.
SAMPLE_PASSES = {1_000: 20, 10_000: 4, 100_000: 1}
CHUNKS_PER_DOCUMENT = 100
REPEAT = 9
QUERIES = (
    "w0042 w0217 w1303",
    "w0007 w0815",
    "w0120 w0999 w2048 w0031",
    "w0500 w0501",
    "w0003 w4000",
)


def _vocabulary(rng: random.Random) -> tuple[list[str], list[float]]:
    words = [f"w{n:04d}" for n in range(5000)]
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    rng.shuffle(weights[50:])  # keep a head of common words, scatter the tail
    return words, weights


def grow_to(size: int, have: int, rng: random.Random) -> None:
    from knowledgeweb.library.models import Chunk, Collection, Document
    from knowledgeweb.library.passages import text_digest

    collection, _ = Collection.objects.get_or_create(name="Bench corpus")
    words, weights = _vocabulary(random.Random(1))
    while have < size:
        number = have // CHUNKS_PER_DOCUMENT
        document = Document.objects.create(
            collection=collection,
            title=f"Handbook {number}.md",
            source_key=f"bench/handbook-{number}.md",
            content_hash=f"{number:064x}",
        )
        texts = [" ".join(rng.choices(words, weights, k=60)) for _ in range(CHUNKS_PER_DOCUMENT)]
        Chunk.objects.bulk_create(
            Chunk(document=document, ordinal=n, text=text, text_digest=text_digest(text))
            for n, text in enumerate(texts)
        )
        have += CHUNKS_PER_DOCUMENT


def _passes(action: Callable[[], None], passes: int) -> Callable[[], None]:
    def repeated() -> None:
        for _ in range(passes):
            action()

    return repeated


def main() -> int:
    setup_django()
    from django.db import connection, transaction

    from knowledgeweb.library.provider import LocalProvider
    from knowledgeweb.library.search import search_terms
    from knowledgeweb.library.search.sqlite import match_expression

    if connection.vendor != "sqlite":
        print("This benchmark compares against raw FTS5 and needs SQLite.")
        return 1
    provider = LocalProvider(top_k=20)
    rng = random.Random(7)
    have = 0
    print("Local index search (LocalProvider.search vs raw FTS5, top 20)")
    for size in SIZES:
        started = time.perf_counter()
        with transaction.atomic():
            grow_to(size, have, rng)
        have = size
        print(f" {size:,} chunks (built in {time.perf_counter() - started:.1f} s)")

        def local() -> None:
            for query in QUERIES:
                if not provider.search(query).hits:
                    raise RuntimeError(f"no hits for {query!r}")

        def raw() -> None:
            with connection.cursor() as cursor:
                for query in QUERIES:
                    cursor.execute(
                        "SELECT rowid, bm25(library_chunk_fts) AS rank FROM library_chunk_fts "
                        "WHERE library_chunk_fts MATCH %s ORDER BY rank LIMIT 20",
                        [match_expression(search_terms(query))],
                    )
                    cursor.fetchall()

        local()  # warm the page cache for both
        raw()
        passes = SAMPLE_PASSES[size]
        medians = interleaved_medians(
            {"raw": _passes(raw, passes), "local": _passes(local, passes)}, repeat=REPEAT
        )
        raw_s, local_s = medians["raw"] / passes, medians["local"] / passes
        show_time(f"raw FTS5, {len(QUERIES)} queries", raw_s, repeat=REPEAT)
        show_time(f"LocalProvider.search, {len(QUERIES)} queries", local_s, repeat=REPEAT)
        # Issue 25: within 1.3x of raw FTS5 at every size, the small index included (where our
        # fixed cost per search weighs most).
        show_ratio(f"local index: LocalProvider.search / raw FTS5, {size:,} chunks", local_s / raw_s, 1.3)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
