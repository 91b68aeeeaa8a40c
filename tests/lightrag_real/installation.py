"""The LightRAG 1.5.7 installation the real-server tests run: a cached virtualenv and tiktoken files.

Both live in one cache directory OUTSIDE the repository, reused by every run (and by CI,
which runs on the same machine):

- ``$KNOWLEDGEWEB_LIGHTRAG_CACHE`` when set, else ``$XDG_CACHE_HOME/knowledgeweb/lightrag-1.5.7``,
  else ``~/.cache/knowledgeweb/lightrag-1.5.7``;
- ``venv/``: ``pip install "lightrag-hku[api]==1.5.7"`` (PyPI, once; about 770 MB);
- ``tiktoken/``: the BPE files LightRAG's tokenizer would download at first use, which
  this machine cannot do. They are rebuilt from the npm registry's ``tiktoken@1.0.22``
  package (``package/encoders/*.json``, fetched once with ``npm pack``), named as
  tiktoken's ``load.py`` names its cache entries (the SHA-1 of the blob URL), and checked
  against the SHA-256 that the installed tiktoken itself expects, on every run, before use.

Once the cache exists nothing here touches the network: the tests run offline. Prepare it
ahead (e.g. before going offline) with ``.venv/bin/python -m tests.lightrag_real.installation``.
A failed install raises :class:`InstallError`, which the fixture turns into a test failure.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Mapping
from pathlib import Path

from tests.cached_venv import CachedVenv, building, pip_install
from tests.cached_venv import InstallError as InstallError
from tests.cached_venv import cache_root as cached_root
from tests.cached_venv import run as run_step

LIGHTRAG_VERSION = "1.5.7"
LIGHTRAG_REQUIREMENT = f"lightrag-hku[api]=={LIGHTRAG_VERSION}"
TIKTOKEN_NPM_PACKAGE = "tiktoken@1.0.22"
TIKTOKEN_NPM_TARBALL = "tiktoken-1.0.22.tgz"
#: The encodings tiktoken stores as ``.tiktoken`` files (``gpt2`` uses another format LightRAG never asks for).
ENCODINGS = ("r50k_base", "p50k_base", "cl100k_base", "o200k_base")
CACHE_ENV = "KNOWLEDGEWEB_LIGHTRAG_CACHE"
NPM_TIMEOUT_SECONDS = 300
_READY = ".knowledgeweb-ready"

#: Run by the venv's own Python: which blob URL and SHA-256 tiktoken expects for each encoding.
_EXPECTATIONS_SCRIPT = """
import json, sys
import tiktoken_ext.openai_public as public
found = {}
def capture(blobpath, expected_hash=None):
    found[name] = {"url": blobpath, "sha256": expected_hash}
    return {}
public.load_tiktoken_bpe = capture
for name in sys.argv[1:]:
    getattr(public, name)()
print(json.dumps(found))
"""


class Installation(CachedVenv):
    """The cache directory and what is built in it."""

    @property
    def server(self) -> Path:
        return self.venv / "bin" / "lightrag-server"

    @property
    def tiktoken_cache(self) -> Path:
        return self.root / "tiktoken"


def cache_root() -> Path:
    return cached_root(CACHE_ENV, f"lightrag-{LIGHTRAG_VERSION}")


def prepare(root: Path | None = None) -> Installation:
    """The ready installation, built on first use; raise ``InstallError`` when it cannot be."""
    installation = Installation(root or cache_root())
    with building(installation.root, "LightRAG"):
        _ensure_venv(installation)
        _ensure_tiktoken(installation)
    return installation


# --- the virtualenv -----------------------------------------------------------------------


def _ensure_venv(installation: Installation) -> None:
    marker = installation.venv / _READY
    if marker.is_file() and marker.read_text() == LIGHTRAG_REQUIREMENT and installation.server.is_file():
        return
    # pip itself goes in too, since LightRAG may call it.
    pip_install(
        installation.venv,
        ["pip", LIGHTRAG_REQUIREMENT],
        log=installation.root / "install.log",
        what=f'pip install "{LIGHTRAG_REQUIREMENT}"',
    )
    version = subprocess.run(  # noqa: S603 - the cached venv's own interpreter, fixed arguments
        [str(installation.python), "-c", "import importlib.metadata as m; print(m.version('lightrag-hku'))"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    ).stdout.strip()
    if version != LIGHTRAG_VERSION or not installation.server.is_file():
        raise InstallError(
            f"The LightRAG virtualenv at {installation.venv} holds lightrag-hku {version or 'nothing'} "
            f"and no usable lightrag-server, not {LIGHTRAG_VERSION}. Delete that directory and run again."
        )
    marker.write_text(LIGHTRAG_REQUIREMENT)


# --- tiktoken -----------------------------------------------------------------------------


def tiktoken_expectations(installation: Installation) -> dict[str, dict[str, str]]:
    """``{encoding: {"url", "sha256"}}`` as the installed tiktoken states them."""
    completed = subprocess.run(  # noqa: S603 - the cached venv's own interpreter, our script
        [str(installation.python), "-c", _EXPECTATIONS_SCRIPT, *ENCODINGS],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    try:
        found = json.loads(completed.stdout)
    except ValueError:
        found = None
    if completed.returncode != 0 or not isinstance(found, dict) or set(found) != set(ENCODINGS):
        raise InstallError(
            "Could not read the BPE files' URLs and SHA-256 from the installed tiktoken: "
            + (completed.stderr.strip().splitlines() or ["no output"])[-1]
        )
    return found


def cache_file_name(url: str) -> str:
    """tiktoken's cache key for a blob URL (``load.py``: SHA-1 of the URL)."""
    return hashlib.sha1(url.encode()).hexdigest()  # noqa: S324 - tiktoken's own naming, not security


def _ensure_tiktoken(installation: Installation) -> None:
    expected = tiktoken_expectations(installation)
    cache = installation.tiktoken_cache
    cache.mkdir(parents=True, exist_ok=True)
    missing = [
        name
        for name, facts in expected.items()
        if not _matches(cache / cache_file_name(facts["url"]), facts["sha256"])
    ]
    if not missing:
        return
    tarball = _tiktoken_tarball(installation)
    with tarfile.open(tarball, "r:gz") as archive:
        for name in missing:
            facts = expected[name]
            member = archive.extractfile(f"package/encoders/{name}.json")
            if member is None:
                raise InstallError(f"{TIKTOKEN_NPM_TARBALL} has no encoders/{name}.json.")
            data = bpe_file_from_npm_encoder(json.load(member))
            actual = hashlib.sha256(data).hexdigest()
            if actual != facts["sha256"]:
                raise InstallError(
                    f"The {name} BPE file rebuilt from {TIKTOKEN_NPM_PACKAGE} has SHA-256 {actual}, "
                    f"but tiktoken expects {facts['sha256']}; it was not used."
                )
            target = cache / cache_file_name(facts["url"])
            partial = target.with_suffix(".partial")
            partial.write_bytes(data)
            partial.replace(target)


def bpe_file_from_npm_encoder(encoder: Mapping[str, object]) -> bytes:
    """A ``.tiktoken`` file (``<base64 token> <rank>`` per line) from the npm package's encoder JSON.

    The npm package stores ``bpe_ranks`` as lines of ``<first token as text> <first rank>
    <base64 token> <base64 token> ...``, each run of tokens taking consecutive ranks.
    """
    ranks = encoder.get("bpe_ranks")
    if not isinstance(ranks, str):
        raise InstallError("The npm tiktoken encoder has no 'bpe_ranks' string.")
    lines: list[str] = []
    for run in ranks.split("\n"):
        if not run.strip():
            continue
        parts = run.split(" ")
        offset = int(parts[1])
        lines.extend(f"{token} {offset + index}\n" for index, token in enumerate(parts[2:]))
    return "".join(lines).encode("ascii")


def _matches(path: Path, sha256: str) -> bool:
    return path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == sha256


def _tiktoken_tarball(installation: Installation) -> Path:
    folder = installation.root / "npm"
    tarball = folder / TIKTOKEN_NPM_TARBALL
    if tarball.is_file():
        return tarball
    npm = shutil.which("npm")
    if npm is None:
        raise InstallError(
            f"npm is needed once to fetch {TIKTOKEN_NPM_PACKAGE} (LightRAG's tokenizer files); "
            "install Node.js's npm (Debian: apt-get install npm)."
        )
    folder.mkdir(parents=True, exist_ok=True)
    run_step(
        [npm, "pack", TIKTOKEN_NPM_PACKAGE, "--pack-destination", str(folder), "--silent"],
        log=installation.root / "install.log",
        timeout=NPM_TIMEOUT_SECONDS,
        what=f"fetch {TIKTOKEN_NPM_PACKAGE} from the npm registry (needed once)",
    )
    if not tarball.is_file():
        raise InstallError(f"npm pack {TIKTOKEN_NPM_PACKAGE} did not write {tarball}.")
    return tarball


if __name__ == "__main__":
    try:
        ready = prepare()
    except InstallError as error:
        sys.exit(f"LightRAG test cache: {error}")
    sys.stdout.write(f"LightRAG {LIGHTRAG_VERSION} test cache ready at {ready.root}\n")
