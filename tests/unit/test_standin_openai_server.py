"""The stand-in OpenAI-compatible model server: its wire and its rules, over real loopback HTTP."""

from __future__ import annotations

import base64
import json
import math
import struct
from collections.abc import Iterator

import httpx
import pytest

from tests.standins.openai_server import (
    COMPLETION_DELIMITER,
    TUPLE_DELIMITER,
    StandinServer,
    embedding,
    entity_mentions,
    extract,
    query_keywords,
    serve,
)

KEY = "standin-unit-test-key"
TEXT = (
    "Clara Voss founded the Meridian Observatory in Lyon in 1891. "
    "The Meridian Observatory houses the Halden Telescope."
)
EXTRACTION_SYSTEM = (
    "---Role---\nYou are a Knowledge Graph Specialist responsible for extracting entities and relationships "
    "from the `---Input Text---` section of user prompt.\n  - Entity row: "
    f"`entity{TUPLE_DELIMITER}entity_name{TUPLE_DELIMITER}entity_type{TUPLE_DELIMITER}entity_description`\n"
    f"9. **Completion Signal:** Output the literal string `{COMPLETION_DELIMITER}` only after all entities"
)


@pytest.fixture
def standin() -> Iterator[StandinServer]:
    with serve(api_key=KEY) as server:
        yield server


def chat(server: StandinServer, messages: list[dict[str, str]], **extra: object) -> httpx.Response:
    return httpx.post(
        f"{server.base_url}/chat/completions",
        json={"model": "m", "messages": messages, **extra},
        headers={"Authorization": f"Bearer {KEY}"},
        timeout=10,
    )


def test_names_are_runs_of_capitalised_words_without_leading_function_words() -> None:
    mentions = entity_mentions("The University of Geneva hired Clara Voss, who met Emile Fabre.")
    assert [m.name for m in mentions] == ["University of Geneva", "Clara Voss", "Emile Fabre"]


def test_extraction_relates_names_in_one_sentence_with_the_words_between_as_keywords() -> None:
    found = extract(TEXT)
    assert list(found.entities) == ["Clara Voss", "Meridian Observatory", "Lyon", "Halden Telescope"]
    assert found.entities["Lyon"]["type"] == "Location"
    assert found.relations[("Clara Voss", "Meridian Observatory")]["keywords"] == ["founded"]
    assert found.relations[("Meridian Observatory", "Halden Telescope")]["sentences"] == [
        "The Meridian Observatory houses the Halden Telescope."
    ]


def test_query_keywords_put_names_low_and_other_words_high() -> None:
    assert query_keywords("Who founded the Meridian Observatory?") == {
        "high_level_keywords": ["founded"],
        "low_level_keywords": ["Meridian Observatory"],
    }
    assert query_keywords("what is it?") == {"high_level_keywords": [], "low_level_keywords": []}


def test_embeddings_are_unit_vectors_and_orthogonal_without_a_shared_word() -> None:
    first, second = embedding("telescope lens", 256), embedding("marmalade saxophone", 256)
    assert math.isclose(sum(x * x for x in first), 1.0)
    assert sum(a * b for a, b in zip(first, second, strict=True)) == 0
    assert embedding("the of and", 256)[0] == 1.0  # no content word: the reserved coordinate


def test_an_extraction_prompt_gets_delimited_rows_and_the_completion_marker(standin: StandinServer) -> None:
    user = f"---Task---\nExtract.\n---Input Text---\n```\n{TEXT}\n```\n\n---Output---\n"
    response = chat(
        standin, [{"role": "system", "content": EXTRACTION_SYSTEM}, {"role": "user", "content": user}]
    )
    assert response.status_code == 200
    rows = response.json()["choices"][0]["message"]["content"].split("\n")
    assert rows[-1] == COMPLETION_DELIMITER
    assert rows[0] == TUPLE_DELIMITER.join(
        ["entity", "Clara Voss", "Person", "Clara Voss founded the Meridian Observatory in Lyon in 1891."]
    )
    assert [r.split(TUPLE_DELIMITER)[0] for r in rows[:-1]] == ["entity"] * 4 + ["relation"] * 4
    assert all(len(r.split(TUPLE_DELIMITER)) == 5 for r in rows[4:-1])


def test_a_keyword_prompt_gets_the_json_object_it_asks_for(standin: StandinServer) -> None:
    prompt = (
        'Output JSON with "high_level_keywords" and "low_level_keywords".\n---Real Data---\n'
        "User Query: Who founded the Meridian Observatory?\n---Output---\nOutput:"
    )
    response = chat(standin, [{"role": "user", "content": prompt}], response_format={"type": "json_object"})
    assert json.loads(response.json()["choices"][0]["message"]["content"]) == {
        "high_level_keywords": ["founded"],
        "low_level_keywords": ["Meridian Observatory"],
    }


def test_plain_chat_streams_server_sent_events_that_add_up_to_the_plain_reply(standin: StandinServer) -> None:
    messages = [{"role": "user", "content": "Hello there, model."}]
    plain = chat(standin, messages).json()["choices"][0]["message"]["content"]
    assert plain == "Stand-in reply to: Hello there, model."
    with httpx.stream(
        "POST",
        f"{standin.base_url}/chat/completions",
        json={"model": "m", "messages": messages, "stream": True},
        headers={"Authorization": f"Bearer {KEY}"},
        timeout=10,
    ) as response:
        assert response.headers["content-type"] == "text/event-stream"
        events = [line.removeprefix("data: ") for line in response.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(event) for event in events[:-1]]
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == plain
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_embeddings_come_as_floats_or_base64_of_the_same_vector(standin: StandinServer) -> None:
    def embed(encoding: str) -> object:
        response = httpx.post(
            f"{standin.base_url}/embeddings",
            json={
                "model": "e",
                "input": ["Halden Telescope lens"],
                "encoding_format": encoding,
                "dimensions": 64,
            },
            headers={"Authorization": f"Bearer {KEY}"},
            timeout=10,
        )
        assert response.status_code == 200
        return response.json()["data"][0]["embedding"]

    floats = embed("float")
    packed = base64.b64decode(str(embed("base64")))
    assert list(struct.unpack("<64f", packed)) == pytest.approx(floats)
    assert floats == pytest.approx(embedding("Halden Telescope lens", 64))


def test_a_wrong_key_and_a_bad_body_are_refused_with_openai_style_errors(standin: StandinServer) -> None:
    wrong = httpx.post(
        f"{standin.base_url}/embeddings",
        json={"input": "x"},
        headers={"Authorization": "Bearer nope"},
        timeout=10,
    )
    assert wrong.status_code == 401
    assert wrong.json()["error"]["code"] == "invalid_api_key"
    empty = chat(standin, [])
    assert (empty.status_code, empty.json()["error"]["message"]) == (
        400,
        "'messages' must be a non-empty list of objects.",
    )
    assert httpx.get(f"{standin.base_url.removesuffix('/v1')}/standin/calls", timeout=10).json() == {}
