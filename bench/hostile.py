"""The worst Markdown we know, at the prose cap: each message must render in at most 1 s.

For each hostile input of ``MAX_PROSE_CHARS`` characters, the whole write-time
render of one answer: parse (the link grammar), HTML, sanitizer with the
citation hooks, and the export text regenerated from the tokens. Times are CPU
seconds of this process (``time.process_time``), so other work on a shared
machine inflates them less than wall time; the verdict is against 1 s.

Inputs that hold more than ``linkgrammar.MAX_TOKENS`` tokens are shown as
written (the structure cap); the report says which ones.
"""

from __future__ import annotations

import statistics
import sys
import time

if __package__ in {None, ""}:
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))

from bench.harness import REPEAT, setup_django, show_ratio

HANDLE = "#knowledge-source-" + "0" * 32


def cases(size: int) -> dict[str, str]:
    def fill(unit: str) -> str:
        return (unit * (size // len(unit) + 1))[:size]

    return {
        "unmatched [": "[" * size,
        "unmatched [ with words": fill("[a "),
        "nested [[[…]( runs": fill("[" * 500 + "]("),
        "links to citations": fill(f"[l]({HANDLE}) "),
        "plain links, one per line": fill("[docs](https://example.org/a)\n"),
        "autolinks": fill("<https://e.org/x> "),
        "GFM table (a paragraph: tables are off)": "| a | b | c |\n|---|---|---|\n" + fill("| x | y | z |\n"),
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
    }


def main() -> int:
    setup_django()
    from knowledgeweb.knowledge.linkgrammar import MAX_TOKENS
    from knowledgeweb.threads.exports import message_export_parts
    from knowledgeweb.threads.rendering.pipeline import render_assistant_content
    from knowledgeweb.threads.services.messages import MAX_PROSE_CHARS

    print(
        f"One hostile answer at the prose cap ({MAX_PROSE_CHARS:,} characters; structure cap {MAX_TOKENS:,} tokens)"
    )
    ok = True
    for name, text in cases(MAX_PROSE_CHARS).items():
        samples = []
        as_written = False
        for _ in range(max(3, REPEAT // 2)):
            start = time.process_time()
            rendered = render_assistant_content(text, {})
            message_export_parts(rendered.parsed, rendered.verdicts)
            samples.append(time.process_time() - start)
            as_written = rendered.parsed.as_written
        seconds = statistics.median(samples)
        label = f"{name}{' (shown as written)' if as_written else ''}, s"
        ok &= show_ratio(label, seconds, 1.0)
    print("all targets met" if ok else "some targets missed (see MISSED above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
