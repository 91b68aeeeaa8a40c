"""The cached installation: tiktoken files rebuilt from npm and verified, and a clear failure offline."""

from __future__ import annotations

import io
import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.lightrag_real.conftest import RealLightrag
from tests.lightrag_real.installation import (
    ENCODINGS,
    TIKTOKEN_NPM_TARBALL,
    Installation,
    InstallError,
    _ensure_tiktoken,
    bpe_file_from_npm_encoder,
    cache_file_name,
    prepare,
    tiktoken_expectations,
)

pytestmark = pytest.mark.real_lightrag


def test_npm_runs_of_ranks_become_tiktoken_lines() -> None:
    encoder = {"bpe_ranks": "! 0 IQ== Ig==\n! 5 Iw==", "special_tokens": {}, "pat_str": ""}
    assert bpe_file_from_npm_encoder(encoder) == b"IQ== 0\nIg== 1\nIw== 5\n"


def test_the_installed_tiktoken_encodes_offline_from_the_rebuilt_cache(real_lightrag: RealLightrag) -> None:
    installation = real_lightrag.installation
    expected = tiktoken_expectations(installation)
    assert set(expected) == set(ENCODINGS)
    for facts in expected.values():
        assert (installation.tiktoken_cache / cache_file_name(facts["url"])).is_file()
    script = (
        "import tiktoken, json\n"
        "names = ['cl100k_base', 'o200k_base']\n"
        "print(json.dumps({n: tiktoken.get_encoding(n).decode(tiktoken.get_encoding(n).encode('Halden "
        "Telescope')) for n in names}))"
    )
    completed = subprocess.run(  # noqa: S603 - the cached venv's interpreter, our script
        [str(installation.python), "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        # No network route: a cache miss would try to download and fail.
        env={"PATH": os.environ["PATH"], "TIKTOKEN_CACHE_DIR": str(installation.tiktoken_cache)},
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout) == {
        "cl100k_base": "Halden Telescope",
        "o200k_base": "Halden Telescope",
    }


def test_a_tampered_npm_encoder_fails_tiktokens_checksum_and_is_never_written(
    real_lightrag: RealLightrag, tmp_path: Path
) -> None:
    installation = Installation(tmp_path / "cache")
    installation.root.mkdir()
    installation.venv.symlink_to(real_lightrag.installation.venv)
    real_tarball = real_lightrag.installation.root / "npm" / TIKTOKEN_NPM_TARBALL
    tampered = installation.root / "npm" / TIKTOKEN_NPM_TARBALL
    tampered.parent.mkdir()
    # The encoders tiktoken needs, one of them altered by a single token.
    with (
        tarfile.open(real_tarball, "r:gz") as source,
        tarfile.open(tampered, "w:gz", compresslevel=1) as target,
    ):
        for name in ENCODINGS:
            member = source.getmember(f"package/encoders/{name}.json")
            data = source.extractfile(member).read()  # type: ignore[union-attr]
            if name == "r50k_base":
                encoder = json.loads(data)
                encoder["bpe_ranks"] = encoder["bpe_ranks"].replace(" IQ== ", " Ig== ", 1)
                data = json.dumps(encoder).encode()
            member.size = len(data)
            target.addfile(member, io.BytesIO(data))

    with pytest.raises(
        InstallError, match=r"The r50k_base BPE file rebuilt from tiktoken@1.0.22 has SHA-256"
    ):
        _ensure_tiktoken(installation)
    url = tiktoken_expectations(installation)["r50k_base"]["url"]
    assert not (installation.tiktoken_cache / cache_file_name(url)).exists()


def test_without_a_registry_the_install_fails_with_a_clear_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No index, no local wheels, no configuration: what a machine without PyPI sees.
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    with pytest.raises(InstallError) as raised:
        prepare(tmp_path / "cache")
    message = str(raised.value)
    assert message.startswith('Could not pip install "lightrag-hku[api]==1.5.7" (this needs PyPI once')
    assert "Is the package registry reachable?" in message
    assert "No matching distribution found" in message
    assert not (tmp_path / "cache" / "venv" / ".knowledgeweb-ready").exists()
