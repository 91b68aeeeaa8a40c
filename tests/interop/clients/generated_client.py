"""Drive knowledgeweb's API with a client that openapi-python-client generated from its document.

Run as ``python generated_client.py <spec.json>`` with the interpreter of the cached interop
environment (the generated package needs httpx and attrs, which it holds). The spec names the
folder holding the generated package ``knowledgeweb_client``, the server's base URL and a token.
Every call goes through the generated functions and models; what they parsed is printed as one
JSON object on stdout (``to_dict()`` of each model, the raw paging headers), for the test to
compare with what the server stored and answers.
"""

from __future__ import annotations

import json
import re
import sys
from importlib import import_module
from pathlib import Path
from typing import Any

PACKAGE = "knowledgeweb_client"
#: The artifact a caller appends: its keys must all come back (the reserved one is stripped).
ARTIFACT: dict[str, Any] = {
    "custom": 1,
    "nested": {"list": [1, "two", None, {"deep": True}], "empty": {}},
    "knowledge_sources": ["forged"],
}


def run(spec: dict[str, Any]) -> dict[str, Any]:
    sys.path.insert(0, spec["package_parent"])
    # The package is generated at run time, so it is loaded by name.
    package = import_module(PACKAGE)
    models = import_module(f"{PACKAGE}.models")
    search = import_module(f"{PACKAGE}.api.knowledge.knowledgeweb_api_knowledge_search")
    threads = {
        name: import_module(f"{PACKAGE}.api.threads.knowledgeweb_api_threads_{name}")
        for name in (
            "append_message",
            "create_thread",
            "export_thread",
            "export_thread_markdown",
            "get_thread",
            "list_threads",
        )
    }
    append, create, get = threads["append_message"], threads["create_thread"], threads["get_thread"]
    export_json, export_markdown, list_threads = (
        threads["export_thread"],
        threads["export_thread_markdown"],
        threads["list_threads"],
    )
    AuthenticatedClient = package.AuthenticatedClient  # noqa: N806 - the generated class
    MessageIn, MessageInArtifactType0, MessageInType = (  # noqa: N806
        models.MessageIn,
        models.MessageInArtifactType0,
        models.MessageInType,
    )
    SearchIn, SearchInTool, ThreadIn = models.SearchIn, models.SearchInTool, models.ThreadIn  # noqa: N806

    client = AuthenticatedClient(
        base_url=spec["base_url"], token=spec["token"], raise_on_unexpected_status=True
    )
    thread = create.sync(client=client, body=ThreadIn(title="Owls"))
    found = search.sync(
        client=client, body=SearchIn(tool=SearchInTool.KNOWLEDGE_SEARCH, query="owls", thread_id=thread.id)
    )
    appended = append.sync(
        thread.id,
        client=client,
        body=MessageIn(
            type_=MessageInType.TOOL,
            content="A note of my own.",
            name="note",
            artifact=MessageInArtifactType0.from_dict(ARTIFACT),
        ),
    )
    link = re.search(r"\[[^\]\n]+\]\(#knowledge-[A-Za-z0-9_-]+\)", found.content)
    if link is None:
        raise RuntimeError(f"no citation link in {found.content!r}")
    answer = append.sync(
        thread.id,
        client=client,
        body=MessageIn(type_=MessageInType.AI, content=f"Owls hunt at night {link.group(0)}."),
    )
    for title in ("Herons", "Raptors"):
        create.sync(client=client, body=ThreadIn(title=title))
    pages = []
    cursor = ""
    while True:
        page = list_threads.sync_detailed(client=client, limit=2, cursor=cursor)
        pages.append(
            {
                "ids": [str(t.id) for t in page.parsed],
                "next_cursor": page.headers.get("X-Next-Cursor"),
                "link": page.headers.get("Link"),
            }
        )
        cursor = page.headers.get("X-Next-Cursor", "")
        if not cursor:
            break
    return {
        "thread_id": str(thread.id),
        "search": found.to_dict(),
        "appended": appended.to_dict(),
        "answer": answer.to_dict(),
        "detail": get.sync(thread.id, client=client).to_dict(),
        "export_json": export_json.sync(thread.id, client=client).to_dict(),
        "export_markdown": export_markdown.sync(thread.id, client=client),
        "pages": pages,
    }


def main(argv: list[str]) -> None:
    spec = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    sys.stdout.write(json.dumps(run(spec)) + "\n")


if __name__ == "__main__":
    main(sys.argv)
