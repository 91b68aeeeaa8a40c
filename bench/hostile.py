"""The worst Markdown we know, at the prose cap: each message must render in at most 1 s.

For each hostile input of ``MAX_PROSE_CHARS`` characters, the whole write-time
render of one answer: parse (the link grammar), HTML, sanitizer with the
citation hooks (its citations resolve against a source as long as a whole tool
output, so each one's claim and closest passage are worked out), and the export
text regenerated from the tokens. Times are CPU
seconds of this process (``time.process_time``), so other work on a shared
machine inflates them less than wall time; the verdict is against 1 s.

Inputs that hold more than ``linkgrammar.MAX_TOKENS`` tokens are shown as
written (the structure cap), and tables holding more than
``linkgrammar.MAX_TABLE_CELLS`` cells are shown as text (parsed a second time with
tables off); the report says which ones.
"""

from __future__ import annotations

import statistics
import sys
import time

if __package__ in {None, ""}:
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))

from bench.harness import REPEAT, finish, setup_django, verdict

HANDLE = "#knowledge-source-" + "0" * 32


def table(columns: int, rows: int, *cells: str) -> str:
    """A GFM table: a header row, its delimiter row and ``rows - 1`` body rows of ``columns``
    cells, which take ``cells`` in turn."""
    line = "|" + "".join(f"{cells[n % len(cells)]}|" for n in range(columns)) + "\n"
    return line + "|" + "-|" * columns + "\n" + line * (rows - 1)


def cases(size: int, max_cells: int) -> dict[str, str]:
    def fill(unit: str) -> str:
        return (unit * (size // len(unit) + 1))[:size]

    columns = 10
    at_cap = max_cells // columns

    return {
        "unmatched [": "[" * size,
        "unmatched [ with words": fill("[a "),
        "nested [[[…]( runs": fill("[" * 500 + "]("),
        "links to citations": fill(f"[l]({HANDLE}) "),
        "plain links, one per line": fill("[docs](https://example.org/a)\n"),
        "autolinks": fill("<https://e.org/x> "),
        "GFM table, 3 columns": "| a | b | c |\n|---|---|---|\n" + fill("| x | y | z |\n"),
        "GFM table, one-character cells": fill(table(columns, size // (2 * columns), "a")),
        "GFM table, 8,000 columns": table(size // 5, 1, "a"),
        "GFM table, one column, many rows": fill(table(1, size // 4, "a")),
        "GFM table, cells of citations": fill(table(columns, size, f"[l]({HANDLE})")),
        "GFM table, cells of bare URLs": fill(table(columns, size, "https://e.org/x")),
        "pipes, no delimiter row": fill("| a | b | c |\n"),
        "pipes, delimiter rows that do not match": fill("|a|b|c|\n|-|-|\n"),
        "one header of 10,000 cells, mismatched delimiter": "|a" * (size // 4)
        + "\n"
        + "|-" * (size // 4 - 1),
        "strikethrough runs": fill("~~a "),
        "tilde runs": "~" * size,
        "nested ~~ and * runs": fill("~~*a "),
        "bare URLs": fill("https://e.org/x "),
        "URL schemes without hosts": fill("http:// "),
        "a colon-slash-slash after every word": fill("a:// "),
        "bare e-mail addresses": fill("a.b@c.de "),
        "@ runs": fill("a@"),
        "deep lists (15 levels)": "".join("  " * (i % 15) + "- item\n" for i in range(size // 20))[:size],
        "deep quotes (15 levels)": "".join(">" * (i % 15) + " q\n" for i in range(size // 10))[:size],
        "emphasis runs": fill("*a "),
        "code spans": fill("`a "),
        "entities": fill("&amp;"),
        "one long fence": "```\n" + fill("x\n")[: size - 8] + "\n```",
        "images": fill("![a](b) "),
        "reference definitions and uses": fill(f"[r]: {HANDLE}\n[x][r] "),
        "many short paragraphs": fill("a\n\n"),
        # Just inside the structure caps: parsed and formatted in full.
        "2,000 unmatched [ among words": ("[a " * 2000 + fill("words "))[:size],
        "1,200 citation links": ((f"[l]({HANDLE}) " * 1200) + fill("words "))[:size],
        "1,200 bare URLs": (("https://e.org/x " * 1200) + fill("words "))[:size],
        # Each citation with a claim of its own: the claim-to-passage comparisons are budgeted.
        "1,200 distinct claims, each cited": "".join(
            f"Claim {n} holds words about tables. [l]({HANDLE}) " for n in range(1200)
        )[:size],
        # At the cell cap (formatted as a table) and one row over it (shown as text).
        "table at the cell cap, words in cells": table(columns, at_cap, "some words in a cell"),
        # A citation in every fourth cell: about as many as the token cap leaves room for.
        "table at the cell cap, citations in cells": table(columns, at_cap, f"[l]({HANDLE})", "a", "b", "c"),
        "table just over the cell cap, citations in cells": table(
            columns, at_cap + 1, f"[l]({HANDLE})", "a", "b", "c"
        ),
        **linkify_cases(size),
    }


def linkify_cases(size: int) -> dict[str, str]:
    """Bare-URL input that made the linkifier quadratic, and its variants.

    The linkifier's URL pattern reads to the end of a run of non-space characters
    looking for a closing bracket; each ``://`` in the run started it again. Runs just
    under ``linkgrammar.MAX_LINKIFY_RUN`` (2,048) are still linked: the most work a run
    may ask for.
    """

    def fill(unit: str) -> str:
        return (unit * (size // len(unit) + 1))[:size]

    def runs(unit: str, *, length: int = 2_040, end: str = " ") -> str:
        return fill((unit * (length // len(unit) + 1))[: length - 1] + end)

    return {
        "linkify: one run of http://a.b/(": fill("http://a.b/("),
        "linkify: runs of http://a.b/( under the run cap": runs("http://a.b/("),
        "linkify: lines of http://a.b/(": runs("http://a.b/(", end="\n"),
        "linkify: runs of http://a.b/{": runs("http://a.b/{"),
        "linkify: runs of https://a.b/x?(": runs("https://a.b/x?("),
        "linkify: runs of mailto:a@b.c(": runs("mailto:a@b.c("),
        "linkify: runs of e-mail addresses with (": runs("a@b.c/("),
        "linkify: runs of http://a.b/( in emphasis": runs("*http://a.b/(*"),
        "linkify: http://a.b/( among words": fill("words http://a.b/( "),
    }


def main() -> int:
    setup_django()
    from knowledgeweb.knowledge import Evidence
    from knowledgeweb.knowledge.linkgrammar import MAX_TABLE_CELLS, MAX_TOKENS
    from knowledgeweb.threads.rendering.export import message_export_parts
    from knowledgeweb.threads.rendering.pipeline import render_assistant_content
    from knowledgeweb.threads.services.messages import MAX_PROSE_CHARS

    print(
        f"One hostile answer at the prose cap ({MAX_PROSE_CHARS:,} characters; structure cap "
        f"{MAX_TOKENS:,} tokens; tables up to {MAX_TABLE_CELLS:,} cells)"
    )
    # The citations resolve, against an excerpt as long as a whole tool output, so that the
    # claim of each and the closest passage of its source are worked out too.
    handle = HANDLE.removeprefix("#")
    excerpt = " ".join(f"Sentence {n} holds some words about links and tables." for n in range(300))
    evidence = {
        handle: Evidence(
            handle=handle, form="shared", id="0" * 32, provider="local", title="Words", excerpt=excerpt
        )
    }
    for name, text in cases(MAX_PROSE_CHARS, MAX_TABLE_CELLS).items():
        samples = []
        as_written = tables_as_text = False
        for _ in range(max(3, REPEAT // 2)):
            start = time.process_time()
            rendered = render_assistant_content(text, evidence)
            message_export_parts(rendered.parsed, rendered.verdicts)
            samples.append(time.process_time() - start)
            as_written = rendered.parsed.as_written
            tables_as_text = rendered.parsed.tables_as_text
        seconds = statistics.median(samples)
        shown = " (shown as written)" if as_written else " (tables as text)" if tables_as_text else ""
        label = f"{name}{shown}, CPU"
        verdict(f"hostile answer: {label}", seconds, 1.0, unit=" s")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
