"""A deterministic stand-in for an OpenAI-compatible model server: chat completions and embeddings.

Written for the tests, standard library only, no model weights. The same input always
gives the same output, so a server built on it (LightRAG) indexes and retrieves the
same way on every run.

Chat completions (``POST /v1/chat/completions``, plain or streamed as server-sent events)
recognise the prompts LightRAG 1.5.7 sends and answer in the formats those prompts ask for:

- entity/relation extraction: delimited ``entity``/``relation`` rows ending with the
  completion delimiter, or the JSON object when the prompt asks for JSON;
- continued extraction ("gleaning"): nothing was missed;
- keyword extraction: ``{"high_level_keywords": [...], "low_level_keywords": [...]}``;
- description summaries: the listed descriptions joined in order.

Anything else gets :meth:`Model.plain_reply` (override it for other tests).

The extraction rules, applied sentence by sentence:

- an entity is a run of capitalised words ("Meridian Observatory", "University of Lyon"),
  less leading function words ("The", "In", ...); its description is the sentences of the
  text that name it;
- two entities named in one sentence are related; the relation's description is that
  sentence and its keywords are the content words between the two names.

Embeddings (``POST /v1/embeddings``, ``float`` or ``base64`` encoding) are a hashed bag of
words of fixed dimension: each distinct content word sets one SHA-256-chosen coordinate,
and the vector is L2-normalised. Texts that share no content word are orthogonal, which
makes "nothing found" reproducible.

Run it as a process (the tests stop it by its id)::

    python -m tests.standins.openai_server --port 0 [--api-key KEY] [--dimension 512]

Its first line on stdout is ``listening on http://HOST:PORT``. In-process, use :func:`serve`.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import os
import re
import struct
import sys
import threading
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_DIMENSION = 1024
DEFAULT_MODEL = "standin-model"
TUPLE_DELIMITER = "<|#|>"
COMPLETION_DELIMITER = "<|COMPLETE|>"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Words that carry no retrieval signal. Capitalised, they also never start an entity name.
STOPWORDS = _words(
    """
    a about above across after again against all also although am among an and any are around
    as at be because been before being below between both but by can could did do does doing
    down during each either every few for from further had has have having he her here hers
    him his how however i if in into is it its itself just later many may me might more most
    much must my neither no nor not now of off on once only or other our ours out over own per
    same she should since so some such than that the their theirs them then there these they
    this those through to today too under until up upon us very via was we were what when
    where whether which while who whom whose why will with within without would yes yet you
    your yours
    """
)

_WORD = re.compile(r"[0-9A-Za-z\u00C0-\u024F]+(?:['\u2019-][0-9A-Za-z\u00C0-\u024F]+)*")
_CAPITALISED = re.compile(r"[A-Z\u00C0-\u00DE][\w\-]*")
#: Lower-case words allowed inside a name ("University of Lyon", "Ada de Vries").
_NAME_JOINERS = frozenset({"of", "de", "van", "von", "der", "la", "le", "du"})
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

_ORGANIZATION_WORDS = _words(
    """
    agency association bank board college committee company consortium corporation council
    foundation group guild institute laboratory lab league ministry museum observatory press
    school society university works
    """
)
_ARTIFACT_WORDS = _words(
    """
    camera clock device engine instrument machine probe rover satellite telescope
    """
)
_EVENT_WORDS = frozenset(["conference", "congress", "expedition", "festival", "survey", "summit", "war"])
_CONTENT_WORDS = frozenset(["atlas", "book", "catalogue", "journal", "paper", "report"])
_PLACE_WORDS = frozenset(["city", "hill", "island", "lake", "mountain", "river", "street", "valley"])
_LOCATION_CUES = frozenset({"in", "at", "near", "from", "to", "across"})


# --- text rules ---------------------------------------------------------------------------


def content_words(text: str) -> list[str]:
    """Lower-case content words in order (stop words dropped, ``'s`` and plural ``s`` trimmed)."""
    found = []
    for match in _WORD.finditer(text):
        word = match.group(0).lower().replace("\u2019", "'")
        word = word.removesuffix("'s")
        if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        if word and word not in STOPWORDS:
            found.append(word)
    return found


def sentences(text: str) -> list[str]:
    """Sentences, one paragraph at a time, whitespace collapsed."""
    found: list[str] = []
    for paragraph in re.split(r"\n\s*\n|\n(?=[#*-])", text):
        flat = " ".join(paragraph.split())
        found.extend(part.strip() for part in _SENTENCE_END.split(flat) if part.strip())
    return found


@dataclass(frozen=True)
class Mention:
    name: str
    start: int
    end: int


def entity_mentions(sentence: str) -> list[Mention]:
    """Runs of capitalised words, less leading function words, in order of appearance."""
    tokens = [(m.group(0), m.start(), m.end()) for m in re.finditer(r"[\w\-]+", sentence)]
    mentions: list[Mention] = []
    index = 0
    while index < len(tokens):
        word, start, end = tokens[index]
        if not _CAPITALISED.fullmatch(word):
            index += 1
            continue
        run = [(word, start, end)]
        index += 1
        while index < len(tokens):
            word, start, end = tokens[index]
            if (_CAPITALISED.fullmatch(word) and _adjacent(sentence, run[-1][2], start)) or (
                word in _NAME_JOINERS
                and index + 1 < len(tokens)
                and _CAPITALISED.fullmatch(tokens[index + 1][0])
                and _adjacent(sentence, run[-1][2], start)
            ):
                run.append((word, start, end))
                index += 1
            else:
                break
        while run and run[0][0].lower() in STOPWORDS:
            run.pop(0)
        while run and run[-1][0] in _NAME_JOINERS:
            run.pop()
        if run and not (len(run) == 1 and run[0][0].isdigit()):
            mentions.append(Mention(" ".join(w for w, _, _ in run), run[0][1], run[-1][2]))
    return mentions


def _adjacent(sentence: str, end: int, start: int) -> bool:
    """Only a single space joins the words of one name (no comma, no full stop)."""
    return sentence[end:start] == " "


def entity_type(name: str, sentence: str, start: int) -> str:
    """A type from the guidance LightRAG lists, guessed from the words of the name or the word before it."""
    words = {word.lower() for word in name.split()}
    for vocabulary, kind in (
        (_ORGANIZATION_WORDS, "Organization"),
        (_ARTIFACT_WORDS, "Artifact"),
        (_EVENT_WORDS, "Event"),
        (_CONTENT_WORDS, "Content"),
        (_PLACE_WORDS, "Location"),
    ):
        if words & vocabulary:
            return kind
    before = sentence[:start].split()
    if before and before[-1].lower() in _LOCATION_CUES:
        return "Location"
    if len(name.split()) in {2, 3}:
        return "Person"
    return "Concept"


@dataclass
class Extraction:
    """What the rules find in one text: entities and relations in order of first appearance."""

    entities: dict[str, dict[str, Any]] = field(default_factory=dict)
    relations: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)


def extract(text: str) -> Extraction:
    result = Extraction()
    for sentence in sentences(text):
        mentions = entity_mentions(sentence)
        masked = sentence
        for mention in mentions:
            masked = masked[: mention.start] + " " * (mention.end - mention.start) + masked[mention.end :]
        for mention in mentions:
            entity = result.entities.setdefault(
                mention.name,
                {"type": entity_type(mention.name, sentence, mention.start), "sentences": []},
            )
            if sentence not in entity["sentences"]:
                entity["sentences"].append(sentence)
        for i, first in enumerate(mentions):
            for second in mentions[i + 1 :]:
                if first.name == second.name:
                    continue
                key = (first.name, second.name)
                if (second.name, first.name) in result.relations:
                    key = (second.name, first.name)
                relation = result.relations.setdefault(key, {"keywords": [], "sentences": []})
                # The words between the two names, less any other name among them.
                between = masked[first.end : second.start]
                for word in content_words(between) or ["related"]:
                    if word not in relation["keywords"]:
                        relation["keywords"].append(word)
                if sentence not in relation["sentences"]:
                    relation["sentences"].append(sentence)
    return result


def query_keywords(query: str) -> dict[str, list[str]]:
    """Low level: the names in the query (else its content words); high level: its other content words."""
    names = [m.name for m in entity_mentions(" ".join(query.split()))]
    named = {word for name in names for word in content_words(name)}
    words = list(dict.fromkeys(content_words(query)))
    if not words:
        return {"high_level_keywords": [], "low_level_keywords": []}
    high = [w for w in words if w not in named] or words
    low = list(dict.fromkeys(names)) or words
    return {"high_level_keywords": high, "low_level_keywords": low}


def embedding(text: str, dimension: int) -> list[float]:
    """The hashed bag of words: one coordinate per distinct content word, L2-normalised.

    Coordinate 0 is kept for texts without a content word, so no vector is ever zero
    (a zero vector has no cosine).
    """
    buckets = Counter(
        1 + int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "big") % (dimension - 1)
        for word in set(content_words(text))
    )
    if not buckets:
        buckets[0] = 1
    norm = math.sqrt(sum(count * count for count in buckets.values()))
    vector = [0.0] * dimension
    for bucket, count in buckets.items():
        vector[bucket] = count / norm
    return vector


# --- the model: prompt -> reply -----------------------------------------------------------


class Model:
    """Turns a chat request into a reply by rules. Subclass and override ``plain_reply`` to extend."""

    name = DEFAULT_MODEL

    def __init__(self, *, dimension: int = DEFAULT_DIMENSION) -> None:
        if dimension < 2:
            raise ValueError("the embedding dimension must be at least 2")
        self.dimension = dimension
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def count(self, kind: str) -> None:
        with self._lock:
            self.calls[kind] += 1

    def reply(self, messages: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
        """(kind, reply text) for a chat request."""
        system = "\n".join(text_of(m) for m in messages if m.get("role") == "system")
        user = text_of(messages[-1]) if messages else ""
        everything = system + "\n" + user
        if "Based on the last extraction task" in user:
            kind = "extraction_continued"
            text = '{"entities": [], "relationships": []}' if _wants_json(everything) else _completion(system)
        elif "---Input Text---" in user and "extracting entities and relationships" in everything:
            kind = "extraction"
            text = self.extraction_reply(everything, user)
        elif "User Query:" in user and "high_level_keywords" in everything:
            kind = "keywords"
            match = re.search(r"User Query:(.*?)(?:\n\s*---Output---|\Z)", user, re.DOTALL)
            text = json.dumps(query_keywords(match.group(1).strip() if match else ""))
        elif "Description List:" in user:
            kind = "summary"
            text = self.summary_reply(user)
        else:
            kind = "plain"
            text = self.plain_reply(messages)
        self.count(kind)
        return kind, text

    def extraction_reply(self, prompt: str, user: str) -> str:
        match = re.search(r"---Input Text---\s*```\n(.*)\n```", user, re.DOTALL)
        found = extract(match.group(1) if match else "")
        total = _limit(prompt, r"at most (\d+) total (?:rows|records)", 10_000)
        entity_limit = _limit(prompt, r"at most (\d+) entity (?:rows|objects)", 10_000)
        entities = list(found.entities.items())[: min(total, entity_limit)]
        kept = {name for name, _ in entities}
        relations = [(k, v) for k, v in found.relations.items() if k[0] in kept and k[1] in kept]
        relations = relations[: max(0, total - len(entities))]
        if _wants_json(prompt):
            return json.dumps(
                {
                    "entities": [
                        {"name": name, "type": e["type"], "description": " ".join(e["sentences"])}
                        for name, e in entities
                    ],
                    "relationships": [
                        {
                            "source": source,
                            "target": target,
                            "keywords": ",".join(r["keywords"]),
                            "description": " ".join(r["sentences"]),
                        }
                        for (source, target), r in relations
                    ],
                }
            )
        delimiter = _tuple_delimiter(prompt)
        rows = [delimiter.join(["entity", name, e["type"], " ".join(e["sentences"])]) for name, e in entities]
        rows += [
            delimiter.join(["relation", source, target, ",".join(r["keywords"]), " ".join(r["sentences"])])
            for (source, target), r in relations
        ]
        return "\n".join([*rows, _completion(prompt)])

    def summary_reply(self, user: str) -> str:
        match = re.search(r"Description List:\s*```\n(.*?)\n```", user, re.DOTALL)
        parts: list[str] = []
        for line in (match.group(1) if match else "").splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue
            description = item.get("description") if isinstance(item, dict) else None
            if isinstance(description, str) and description.strip() and description not in parts:
                parts.append(description.strip())
        return " ".join(parts)

    def plain_reply(self, messages: Sequence[Mapping[str, Any]]) -> str:
        """Any other chat: a fixed sentence echoing the last message, so callers can check the round trip."""
        last = " ".join(text_of(messages[-1]).split()) if messages else ""
        return f"Stand-in reply to: {last[:500]}"

    def embed(self, text: str, dimension: int | None = None) -> list[float]:
        self.count("embedding")
        return embedding(text, dimension or self.dimension)


def text_of(message: Mapping[str, Any]) -> str:
    """A message's text, whether ``content`` is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _wants_json(prompt: str) -> bool:
    return "Return one valid JSON object with `entities` and `relationships`" in prompt or (
        "valid JSON object with `entities` and `relationships` arrays" in prompt
    )


def _tuple_delimiter(prompt: str) -> str:
    match = re.search(r"Entity row: `entity(.+?)entity_name", prompt)
    return match.group(1) if match else TUPLE_DELIMITER


def _completion(prompt: str) -> str:
    match = re.search(r"Output the literal string `([^`]+)` only after", prompt)
    return match.group(1) if match else COMPLETION_DELIMITER


def _limit(prompt: str, pattern: str, default: int) -> int:
    match = re.search(pattern, prompt)
    return int(match.group(1)) if match else default


# --- the wire -----------------------------------------------------------------------------


def completion_body(model: str, text: str, number: int) -> dict[str, Any]:
    words = len(text.split())
    return {
        "id": f"chatcmpl-standin-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": words, "total_tokens": words},
    }


def completion_chunks(model: str, text: str, number: int) -> Iterator[dict[str, Any]]:
    """The streamed form: a role chunk, the text in word-sized pieces, then a finish chunk."""
    base = {
        "id": f"chatcmpl-standin-{number}",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
    }
    yield {
        **base,
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}],
    }
    for piece in re.findall(r"\S+\s*|\s+", text):
        yield {**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}


def embedding_body(model: str, vectors: list[list[float]], encoding: str) -> dict[str, Any]:
    data = []
    for index, vector in enumerate(vectors):
        value: Any = vector
        if encoding == "base64":
            value = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
        data.append({"object": "embedding", "index": index, "embedding": value})
    return {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": 0, "total_tokens": 0}}


class StandinServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], model: Model, api_key: str | None) -> None:
        super().__init__(address, _Handler)
        self.model = model
        self.api_key = api_key
        self._number = 0
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        host, port = _host_port(self)
        return f"http://{host}:{port}/v1"

    def next_number(self) -> int:
        with self._lock:
            self._number += 1
            return self._number


class _Handler(BaseHTTPRequestHandler):
    server: StandinServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the tests read the call counts instead."""

    def do_GET(self) -> None:
        path = self.path.split("?")[0].rstrip("/")
        if path in {"/health", "/v1/health"}:
            self._json(HTTPStatus.OK, {"status": "ok"})
        elif path in {"/v1/models", "/models"}:
            self._json(
                HTTPStatus.OK,
                {
                    "object": "list",
                    "data": [{"id": self.server.model.name, "object": "model", "owned_by": "standin"}],
                },
            )
        elif path == "/standin/calls":
            with self.server.model._lock:
                self._json(HTTPStatus.OK, dict(self.server.model.calls))
        else:
            self._error(HTTPStatus.NOT_FOUND, f"No route for GET {path}.")

    def do_POST(self) -> None:
        path = self.path.split("?")[0].rstrip("/").removeprefix("/v1")
        if (
            self.server.api_key is not None
            and self.headers.get("Authorization") != f"Bearer {self.server.api_key}"
        ):
            self._read_body()
            self._error(HTTPStatus.UNAUTHORIZED, "Incorrect API key provided.", "invalid_api_key")
            return
        try:
            body = json.loads(self._read_body() or b"null")
        except ValueError:
            self._error(HTTPStatus.BAD_REQUEST, "The body is not valid JSON.")
            return
        if not isinstance(body, dict):
            self._error(HTTPStatus.BAD_REQUEST, "The body must be a JSON object.")
        elif path == "/chat/completions":
            self._chat(body)
        elif path == "/embeddings":
            self._embeddings(body)
        else:
            self._error(HTTPStatus.NOT_FOUND, f"No route for POST {self.path}.")

    def _chat(self, body: dict[str, Any]) -> None:
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages) or not messages:
            self._error(HTTPStatus.BAD_REQUEST, "'messages' must be a non-empty list of objects.")
            return
        model_name = _model_name(body, self.server.model.name)
        _, text = self.server.model.reply(messages)
        number = self.server.next_number()
        if not body.get("stream"):
            self._json(HTTPStatus.OK, completion_body(model_name, text, number))
            return
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for chunk in completion_chunks(model_name, text, number):
            self._chunk(f"data: {json.dumps(chunk)}\n\n".encode())
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _embeddings(self, body: dict[str, Any]) -> None:
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not inputs or not all(isinstance(i, str) for i in inputs):
            self._error(HTTPStatus.BAD_REQUEST, "'input' must be a string or a non-empty list of strings.")
            return
        dimension = body.get("dimensions")
        if dimension is not None and (not isinstance(dimension, int) or dimension < 2):
            self._error(HTTPStatus.BAD_REQUEST, "'dimensions' must be an integer of at least 2.")
            return
        encoding = body.get("encoding_format") or "float"
        if encoding not in {"float", "base64"}:
            self._error(HTTPStatus.BAD_REQUEST, "'encoding_format' must be 'float' or 'base64'.")
            return
        vectors = [self.server.model.embed(text, dimension) for text in inputs]
        model_name = _model_name(body, self.server.model.name)
        self._json(HTTPStatus.OK, embedding_body(model_name, vectors, encoding))

    def _read_body(self) -> bytes:
        length = self.headers.get("Content-Length", "0")
        return self.rfile.read(int(length)) if length.isdigit() else b""

    def _json(self, status: HTTPStatus, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: HTTPStatus, message: str, code: str | None = None) -> None:
        self._json(status, {"error": {"message": message, "type": "invalid_request_error", "code": code}})

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def _host_port(server: ThreadingHTTPServer) -> tuple[str, int]:
    host, port = server.server_address[:2]
    return (host.decode() if isinstance(host, bytes) else str(host)), int(port)


def _model_name(body: Mapping[str, Any], default: str) -> str:
    """The model the request names (echoed back, as OpenAI does), else the stand-in's own."""
    name = body.get("model")
    return name if isinstance(name, str) and name else default


@contextmanager
def serve(
    *, host: str = "127.0.0.1", port: int = 0, model: Model | None = None, api_key: str | None = None
) -> Iterator[StandinServer]:
    """Run the stand-in in a background thread of this process for the duration of the block."""
    server = StandinServer((host, port), model or Model(), api_key)
    thread = threading.Thread(target=server.serve_forever, name="standin-openai", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument(
        "--api-key",
        default=os.environ.get("STANDIN_OPENAI_API_KEY") or None,
        help="require 'Authorization: Bearer KEY' (default: $STANDIN_OPENAI_API_KEY, else no check)",
    )
    parser.add_argument("--dimension", type=int, default=DEFAULT_DIMENSION)
    options = parser.parse_args(argv)
    server = StandinServer((options.host, options.port), Model(dimension=options.dimension), options.api_key)
    host, port = _host_port(server)
    sys.stdout.write(f"listening on http://{host}:{port}\n")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
