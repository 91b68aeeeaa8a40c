"""The answer, piece by piece, held to what the message store accepts (docs/decisions/0034-a-turn-always-ends-recorded.md)."""

from __future__ import annotations

import re

from knowledgeweb.composer.errors import ModelError, ModelFault
from knowledgeweb.threads.services.messages import MAX_PROSE_CHARS
from knowledgeweb.threads.text import unstorable_field

# A high surrogate at a piece's end may be the first half of a pair whose second half
# comes in the next piece (a server that escapes text as JSON \u pairs may cut between them).
_SURROGATE = re.compile("[\ud800-\udfff]")


class AnswerGuard:
    """Accepts the answer piece by piece, refusing what the message store would refuse.

    A piece that would take the answer past ``MAX_PROSE_CHARS`` or that holds a NUL or
    a lone surrogate raises ``ModelError`` before any of it is relayed or kept.
    """

    def __init__(self, label: str) -> None:
        self._label = label
        self._pieces: list[str] = []
        self._size = 0
        self._held = ""

    @property
    def answer(self) -> str:
        return "".join(self._pieces)

    def accept(self, piece: str) -> str:
        piece = self._held + piece
        self._held = ""
        if _SURROGATE.search(piece):
            if "\ud800" <= piece[-1] <= "\udbff":
                piece, self._held = piece[:-1], piece[-1]
            # A pair cut between pieces (or escaped as two) becomes the character it encodes.
            piece = piece.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
        self._check(piece)
        if self._size + len(piece) > MAX_PROSE_CHARS:
            raise ModelError(
                ModelFault.ANSWER_TOO_LONG,
                f"{self._label}'s answer passed {MAX_PROSE_CHARS:,} characters, the most an answer may hold; "
                "reading stopped there and nothing of it was stored as the answer.",
            )
        self._size += len(piece)
        self._pieces.append(piece)
        return piece

    def finish(self) -> None:
        self._check(self._held)

    def _check(self, piece: str) -> None:
        problem = unstorable_field({"the answer": piece})
        if problem is not None:
            raise ModelError(
                ModelFault.BAD_TEXT,
                f"{self._label} sent text that cannot be stored: {problem} "
                "Reading stopped there and nothing of it was stored as the answer.",
            )
