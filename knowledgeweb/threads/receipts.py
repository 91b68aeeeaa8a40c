"""Evidence receipts: how the server recognises evidence it returned itself (docs/contract.md#evidence-receipts).

Every tool message the retrieval service produces carries, in its artifact under
``knowledge_receipt``, a value signed with ``django.core.signing`` under its own salt
over: a version, the user id, the binding id, the tool the server ran, the time it
was issued, and the SHA-256 of the evidence records in the artifact (the values of
its evidence keys, as canonical JSON with sorted keys).

The digest covers the evidence, never the tool content: real clients rewrite the
content (text blocks with random ids) but keep the artifact. An import checks the
receipt against the evidence it finds: any change to a record, the source id or
the receipt, a receipt moved onto other evidence, another user's receipt, an old
one (``KNOWLEDGEWEB_RECEIPT_MAX_AGE``) or one whose binding no longer serves the
user fails the check, and the evidence is stripped as any caller's is.

A receipt proves that this server returned this evidence to this user; it does not
prove that an answer read the evidence before it was written.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core import signing

from knowledgeweb.bindings.choices import BindingScope
from knowledgeweb.bindings.selectors import binding_list_for_user
from knowledgeweb.knowledge import Evidence, read_signed_sources
from knowledgeweb.knowledge.reserved import EVIDENCE_KEYS, RECEIPT_KEY

#: The salt that keeps receipts apart from every other value this server signs.
RECEIPT_SALT = "knowledgeweb.threads.receipts.evidence"
#: Raised when the signed fields change; a receipt of another version never checks.
RECEIPT_VERSION = 1
#: A clock running slightly behind another worker's must not refuse a fresh receipt.
_CLOCK_SKEW_SECONDS = 60

__all__ = [
    "RECEIPT_KEY",
    "ReceiptCheck",
    "evidence_digest",
    "receipt_check",
    "receipt_issue",
    "with_receipt",
]


@dataclass(frozen=True, slots=True)
class ReceiptCheck:
    """The verdict on one artifact's receipt.

    ``ok``: the receipt checks, and ``sources`` is the evidence it signs (read from the
    records with the tool the server ran). Otherwise ``problem`` says why, for logs and
    tests; the page and the API only say that the evidence was not signed.
    """

    ok: bool
    problem: str = ""
    tool: str = ""
    binding_id: int | None = None
    issued_at: int | None = None
    sources: Mapping[str, Evidence] | None = None

    def stored(self) -> dict[str, Any]:
        """What the message records of a receipt that checked (``Message.evidence_check``)."""
        return {"state": "signed", "tool": self.tool, "binding": self.binding_id, "issued_at": self.issued_at}


def evidence_digest(*, tool: str, artifact: object) -> str:
    """SHA-256 hex of the evidence records of ``artifact`` returned by ``tool``.

    The records exactly as the server wrote them under the evidence keys, as canonical JSON
    (sorted keys, no spaces): every record counts, even one the reader would drop, so the
    evidence an import keeps is byte for byte the evidence that was signed. The tool is
    signed beside it because it decides how the records are read (a native snapshot is
    read only from ``knowledge_search``).
    """
    records = (
        {key: artifact[key] for key in sorted(EVIDENCE_KEYS) if key in artifact}
        if isinstance(artifact, dict)
        else {}
    )
    canonical = json.dumps(records, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def receipt_issue(
    *, user_id: int, binding_id: int, tool: str, artifact: object, issued_at: int | None = None
) -> str:
    """The receipt for ``artifact``'s evidence, returned by ``tool`` through a binding to a user.

    ``issued_at`` (seconds since the epoch) is now unless given; only tests give one.
    """
    payload = {
        "v": RECEIPT_VERSION,
        "u": user_id,
        "b": binding_id,
        "n": tool,
        "t": int(time.time()) if issued_at is None else issued_at,
        "e": evidence_digest(tool=tool, artifact=artifact),
    }
    return signing.Signer(salt=RECEIPT_SALT).sign_object(payload)


def with_receipt(
    artifact: Mapping[str, Any] | None, *, user_id: int, binding_id: int, tool: str
) -> dict[str, Any] | None:
    """A copy of ``artifact`` carrying its receipt; ``None`` stays ``None`` (nothing to sign)."""
    if artifact is None:
        return None
    receipt = receipt_issue(user_id=user_id, binding_id=binding_id, tool=tool, artifact=artifact)
    return {**artifact, RECEIPT_KEY: receipt}


def receipt_check(*, user: User, artifact: object, max_age: int | None = None) -> ReceiptCheck:
    """Whether ``artifact`` holds a receipt this server issued to ``user`` for exactly its evidence.

    ``max_age`` (seconds) defaults to ``KNOWLEDGEWEB_RECEIPT_MAX_AGE``. Signatures made with
    a key in ``SECRET_KEY_FALLBACKS`` still check, so the key can be rotated. The binding
    must still serve the user: enabled, naming the user, scope not disabled, offering the tool.
    """
    if not isinstance(artifact, dict) or not isinstance(artifact.get(RECEIPT_KEY), str):
        return ReceiptCheck(ok=False, problem="no receipt")
    try:
        payload = signing.Signer(salt=RECEIPT_SALT).unsign_object(artifact[RECEIPT_KEY])
    except (signing.BadSignature, ValueError, UnicodeDecodeError):
        # A bad signature, or a value whose signature part cannot even be decoded.
        return ReceiptCheck(ok=False, problem="bad signature")
    problem = _payload_problem(payload, user=user, artifact=artifact, max_age=max_age)
    if problem:
        return ReceiptCheck(ok=False, problem=problem)
    tool = payload["n"]
    return ReceiptCheck(
        ok=True,
        tool=tool,
        binding_id=payload["b"],
        issued_at=payload["t"],
        sources=read_signed_sources(tool, artifact),
    )


def _payload_problem(payload: Any, *, user: User, artifact: Mapping[str, Any], max_age: int | None) -> str:
    fields = {"v": int, "u": int, "b": int, "n": str, "t": int, "e": str}
    if not isinstance(payload, dict) or set(payload) != set(fields):
        return "unknown receipt form"
    if not all(type(payload[key]) is kind for key, kind in fields.items()):
        return "unknown receipt form"
    if payload["v"] != RECEIPT_VERSION:
        return "unknown receipt version"
    if payload["u"] != user.pk:
        return "issued to another user"
    age = time.time() - payload["t"]
    limit = settings.KNOWLEDGEWEB_RECEIPT_MAX_AGE if max_age is None else max_age
    if age > limit or age < -_CLOCK_SKEW_SECONDS:
        return "expired"
    if payload["e"] != evidence_digest(tool=payload["n"], artifact=artifact):
        return "other evidence"
    if not _binding_serves(user=user, binding_id=payload["b"], tool=payload["n"]):
        return "binding no longer serves the user"
    return ""


def _binding_serves(*, user: User, binding_id: int, tool: str) -> bool:
    """The binding is enabled, names ``user``, searches (scope not disabled) and offers ``tool``.

    The agent-name rule is not asked: an import names the agent of the thread, which need
    not be the name the search ran under (docs/decisions/0161-receipt-binding-check.md).
    """
    binding = binding_list_for_user(user=user).filter(pk=binding_id).first()
    if binding is None or binding.scope == BindingScope.DISABLED:
        return False
    return isinstance(binding.tools, list) and tool in binding.tools
