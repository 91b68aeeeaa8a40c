"""The streamed preview: completed sentences, their citations resolved as they arrive.

The preview is not the record. The stored answer is rendered by the thread page's
own pipeline; here each completed sentence becomes plain text parts and citation
parts, which the page's script turns into text nodes and links (never HTML), so
nothing a model writes can become markup. Sources are numbered as the thread's page
numbers them: the thread's own numbers first, then in order of first citation. A
citation part is ``resolved`` only when its handle is in the evidence the answer may
cite (every earlier tool message of the thread plus this turn's); its link text is a
number bound to the source.

What is a link, a citation or code is decided by the one link grammar
(``knowledge/linkgrammar.py``), exactly as for the stored answer: a citation written
inside a code span is code in the preview too, an ordinary link shows its label. Only
the *open* top-level block (the one still being written) is parsed, and it is parsed
again only once it has grown by half since its last parse (or when the model
falls silent, ``tick``), so every character is parsed a bounded number of times
however the answer is cut into pieces: the preview costs time linear in the answer
(docs/decisions/0034-a-turn-always-ends-recorded.md). ``work`` counts the characters
parsed and scanned, so tests measure the cost in operations rather than seconds.

A sentence of the open block is sent only when nothing later can change it: it is
followed by more text, and no character before its end is one that later text could
still turn into markup (an unmatched ``[``, a backtick, an emphasis or strikethrough
marker, a table pipe). Such a sentence waits until its block is closed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from markdown_it.token import Token

from knowledgeweb.knowledge import Evidence, classify_href
from knowledgeweb.knowledge.linkgrammar import MAX_BRACKETS, markdown_parser, visible_text
from knowledgeweb.knowledge.numbering import number_sources

#: The open block is parsed again once the text added since its last parse is at least
#: 1/GROWTH of it: the parses of one block then cost at most (GROWTH + 1) times its length.
GROWTH = 2
#: A tick parses an open block up to this long whatever it grew by; a longer one only once it
#: grew by a sixteenth, so a model trickling a huge block costs no full parse every second.
TICK_FREE_CHARS = 4_000
#: Characters of literal text that later text may still turn into a link, a code span,
#: emphasis, strikethrough or a table: a sentence after one waits for its block to close.
_UNSETTLED = frozenset("[`*_~|")
# A sentence ends after . ! or ? (optionally closed by a quote or bracket) and whitespace.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]?\s+")
# A line that may hold a link reference definition ("[label]: destination").
_DEFINITION = re.compile(r"^ {0,3}\[", re.MULTILINE)
_NEWLINES = re.compile(r"\r\n?")

Part = dict[str, Any]


@dataclass
class _Sentence:
    parts: list[Part] = field(default_factory=list)
    #: Whether a character before its end may still become markup (open block only).
    unsettled: bool = False
    #: Whether more of the answer follows it (text, a break, another block).
    followed: bool = False
    #: Whether it holds bracketed literal text (``[x]``) that a later definition may make a link.
    reference: bool = False

    def add_text(self, text: str) -> None:
        if self.parts and "text" in self.parts[-1]:
            self.parts[-1] = {"text": self.parts[-1]["text"] + text}
        else:
            self.parts.append({"text": text})


class SentenceStream:
    """Feed text pieces; get back the sentences they complete, as parts."""

    def __init__(self, available: Mapping[str, Evidence], numbers: Mapping[str, int] | None = None) -> None:
        """``numbers`` are the sources the thread already cites, with the numbers its page shows;
        a source first cited in this answer takes the next one, as it will on the page."""
        self._available = available
        self._numbers: dict[str, int] = dict(numbers or {})
        #: The text from the start of the open block to the end of what has arrived.
        self._pieces: list[str] = []
        self._open_chars = 0
        self._unparsed = 0
        #: Sentences of the open block already sent.
        self._sent = 0
        self._carriage_return = False
        self._brackets = 0
        self._references: dict[str, Any] = {}
        #: Characters parsed and scanned so far (the cost, in operations).
        self.work = 0

    def feed(self, piece: str) -> Iterator[list[Part]]:
        piece = self._normalized(piece)
        if not piece:
            return
        self.work += len(piece)
        self._brackets += piece.count("[")
        self._pieces.append(piece)
        self._open_chars += len(piece)
        self._unparsed += len(piece)
        if self._unparsed * GROWTH >= self._open_chars:
            yield from self._parse(final=False)

    def tick(self) -> Iterator[list[Part]]:
        """A second has passed (the model may be silent): show what the text so far completes."""
        if self._unparsed and (
            self._open_chars <= TICK_FREE_CHARS or self._unparsed * 16 >= self._open_chars
        ):
            yield from self._parse(final=False)

    def finish(self) -> Iterator[list[Part]]:
        if self._carriage_return:
            self._carriage_return = False
            self._pieces.append("\n")
            self._open_chars += 1
        if self._open_chars:
            yield from self._parse(final=True)

    def _normalized(self, piece: str) -> str:
        """Line ends as the parser reads them (CR LF and CR are LF), a CR at a piece's end held back."""
        if self._carriage_return:
            piece = "\r" + piece
            self._carriage_return = False
        if piece.endswith("\r"):
            self._carriage_return = True
            piece = piece[:-1]
        return _NEWLINES.sub("\n", piece)

    def _parse(self, *, final: bool) -> Iterator[list[Part]]:
        text = "".join(self._pieces)
        self._unparsed = 0
        if self._brackets > MAX_BRACKETS:
            # The stored answer is shown as written, without links, past this many brackets;
            # so is the rest of the preview, and nothing more is parsed.
            if final:
                self._pieces, self._open_chars = [], 0
                yield [{"text": text}]
            return
        self.work += len(text)
        env: dict[str, Any] = {"references": dict(self._references)}
        tokens = markdown_parser().parse(text, env)
        blocks = _top_level_blocks(tokens)
        if final:
            for number, block in enumerate(blocks):
                # The first block was the open one: its first sentences were sent already.
                for sentence in self._sentences(block, settled=True)[self._sent if number == 0 else 0 :]:
                    yield self._numbered(sentence.parts)
            self._pieces, self._open_chars, self._sent = [], 0, 0
            return
        emitted = 0
        for number, block in enumerate(blocks[:-1]):
            sentences = self._sentences(block, settled=True)
            if any(s.reference for s in sentences):
                # Bracketed text that a reference definition further on may still make a link:
                # this block, and every block after it, waits for the end of the answer.
                break
            for sentence in sentences[self._sent if number == 0 else 0 :]:
                yield self._numbered(sentence.parts)
            emitted = number + 1
            self._sent = 0
        if emitted:
            lines = blocks[emitted][0].map
            start = _line_offset(text, lines[0] if lines else 0)
            self._remember_references(text[:start])
            rest = text[start:]
            self._pieces, self._open_chars = [rest], len(rest)
        if blocks and emitted == len(blocks) - 1:
            for sentence in self._sentences(blocks[-1], settled=False)[self._sent :]:
                if sentence.unsettled or not sentence.followed:
                    break
                self._sent += 1
                yield self._numbered(sentence.parts)

    def _numbered(self, parts: list[Part]) -> list[Part]:
        """Number resolved citations as they are sent: in order of first citation, as the page does."""
        resolved = [part for part in parts if part.get("cite") == "resolved" and "number" not in part]
        if resolved:
            self._numbers = number_sources([part["handle"] for part in resolved], self._numbers)
            for part in resolved:
                part["number"] = self._numbers[part["handle"]]
        return parts

    def _remember_references(self, closed_text: str) -> None:
        """Link reference definitions in blocks now closed, for the blocks that follow."""
        if not _DEFINITION.search(closed_text):
            return
        self.work += len(closed_text)
        env: dict[str, Any] = {"references": dict(self._references)}
        markdown_parser().parse(closed_text, env)
        self._references = env["references"]

    def _sentences(self, block: list[Token], *, settled: bool) -> list[_Sentence]:
        """A top-level block's sentences, in order (an open block's last one is never complete)."""
        splitter = _Splitter(settled=settled)
        for index, token in enumerate(block):
            if token.type == "inline":
                self._inline(token.children or [], splitter)
                # The cells of a table row are joined, not cut.
                splitter.line_end(cell=index > 0 and block[index - 1].type in {"th_open", "td_open"})
            elif token.type in {"fence", "code_block"}:
                splitter.text(token.content.rstrip("\n"), splittable=False)
                splitter.line_end()
            elif token.type == "tr_close":
                splitter.line_end()
        self.work += splitter.scanned
        return splitter.result()

    def _inline(self, children: list[Token], splitter: _Splitter) -> None:
        """Walk one inline token's children: text, code, links (citations or not) and breaks."""
        position = 0
        while position < len(children):
            child = children[position]
            if child.type == "link_open":
                close = _matching_close(children, position)
                label = "".join(visible_text(c) for c in children[position + 1 : close])
                citation = self._citation(label, str(child.attrGet("href") or ""))
                if citation is None:
                    splitter.text(label, splittable=False)
                else:
                    splitter.cite(citation, len(label))
                position = close + 1
                continue
            if child.type == "text":
                splitter.text(child.content, splittable=True)
            elif child.type in {"code_inline", "image"}:
                splitter.text(visible_text(child), splittable=False)
            elif child.type == "softbreak":
                splitter.text(" ", splittable=True)
            elif child.type == "hardbreak":
                splitter.line_end()
            position += 1

    def _citation(self, label: str, href: str) -> Part | None:
        state, handle = classify_href(href)
        if state == "other":
            return None
        if state == "malformed" or handle is None:
            return {"cite": "malformed", "label": label}
        source = self._available.get(handle)
        if source is None:
            return {"cite": "unresolved", "label": label}
        return {"cite": "resolved", "handle": handle, "title": source.title}


class _Splitter:
    """Cuts a block's visible text into sentences.

    A sentence ends after . ! or ? and whitespace; citations (and the whitespace around
    them) that follow its full stop still belong to it. A sentence is *followed* once the
    next one has begun, and *unsettled* when a character up to its end may still become
    markup (only in an open block).
    """

    def __init__(self, *, settled: bool) -> None:
        self.settled = settled
        self.sentences = [_Sentence()]
        self.unsettled = False
        #: The current sentence is empty and the one before ended at a full stop.
        self.after_end = False
        self.scanned = 0
        #: A literal ``[`` was seen in this inline content (a ``]`` after it may be a reference).
        self.bracket = False

    @property
    def current(self) -> _Sentence:
        return self.sentences[-1]

    @property
    def previous(self) -> _Sentence | None:
        return self.sentences[-2] if len(self.sentences) > 1 else None

    def text(self, value: str, *, splittable: bool) -> None:
        """Add visible text; ``splittable`` text is the message's own literal text (not code, not a
        link's label), which may end sentences and may still become markup."""
        self.scanned += len(value)
        if not splittable:
            self._add(value, ends=False, literal=False)
            return
        position = 0
        for match in _SENTENCE_END.finditer(value):
            self._add(value[position : match.end()], ends=True, literal=True)
            position = match.end()
        self._add(value[position:], ends=False, literal=True)

    def cite(self, citation: Part, size: int) -> None:
        self.scanned += size
        previous = self.previous
        if self.after_end and previous is not None:
            previous.parts.append(citation)
            return
        self._begin()
        self.current.parts.append(citation)

    def line_end(self, *, cell: bool = False) -> None:
        self.bracket = False
        if cell:
            if self.current.parts:
                self.current.add_text(" ")
            return
        if self.current.parts:
            self.current.add_text("\n")
            self._cut()
        elif self.after_end and self.previous is not None:
            self.previous.add_text("\n")
        self.after_end = False

    def result(self) -> list[_Sentence]:
        sentences = [s for s in self.sentences if s.parts]
        if sentences and not self.settled:
            # The block's last sentence may still grow: an open block never sends it.
            sentences[-1].followed = False
        return sentences

    def _add(self, value: str, *, ends: bool, literal: bool) -> None:
        if not value:
            return
        previous = self.previous
        if self.after_end and previous is not None:
            # Whitespace after a citation that follows a full stop stays with that sentence.
            lead = len(value) - len(value.lstrip())
            if lead:
                previous.add_text(value[:lead])
                value = value[lead:]
            if not value:
                return
        if literal:
            self._watch(value, previous)
        self._begin()
        self.current.unsettled = self.unsettled
        self.current.add_text(value)
        if ends:
            self._cut()
            self.after_end = True

    def _watch(self, value: str, previous: _Sentence | None) -> None:
        """Note literal characters that later text could still turn into markup."""
        if not self.settled and not self.unsettled and _UNSETTLED.intersection(value):
            self.unsettled = True
            if previous is not None and not self.current.parts:
                # It may yet become a citation that belongs to the sentence before.
                previous.unsettled = True
        opened = value.find("[")
        if ("]" in value) if self.bracket else (opened >= 0 and "]" in value[opened:]):
            self.current.reference = True
        self.bracket = self.bracket or opened >= 0

    def _begin(self) -> None:
        previous = self.previous
        if previous is not None:
            previous.followed = True
        self.after_end = False

    def _cut(self) -> None:
        self.sentences.append(_Sentence(unsettled=self.unsettled))


def _matching_close(children: list[Token], start: int) -> int:
    depth = 0
    for index in range(start, len(children)):
        if children[index].type == "link_open":
            depth += 1
        elif children[index].type == "link_close":
            depth -= 1
            if depth == 0:
                return index
    return len(children) - 1


def _top_level_blocks(tokens: list[Token]) -> list[list[Token]]:
    """The parse's top-level blocks, each as its tokens (its first token carries its lines)."""
    blocks: list[list[Token]] = []
    depth = 0
    for token in tokens:
        if depth == 0:
            blocks.append([])
        blocks[-1].append(token)
        depth += token.nesting
    return blocks


def _line_offset(text: str, line: int) -> int:
    """Where line ``line`` (0-based) of ``text`` starts."""
    offset = 0
    for _ in range(line):
        found = text.find("\n", offset)
        if found < 0:
            return len(text)
        offset = found + 1
    return offset
