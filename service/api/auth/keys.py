"""The API key format: `pk_<prefix>_<secret>`; only sha256 of the whole key is stored."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from service.api.auth.principal import ADMIN

# A project's scopes: what a team's keys get. `admin` (an operator's) adds every project's objects.
SCOPES = ("read", "submit")
ALL_SCOPES = (*SCOPES, ADMIN)
KEY_PREFIX = "pk_"


@dataclass(frozen=True)
class NewKey:
    raw: str
    prefix: str
    secret_hash: str


def hash_key(raw: str) -> str:
    # Keys carry 256 bits of randomness, so a fast hash is enough; no password stretching needed.
    return hashlib.sha256(raw.encode()).hexdigest()


def generate_key() -> NewKey:
    prefix = secrets.token_hex(6)
    raw = f"{KEY_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    return NewKey(raw=raw, prefix=prefix, secret_hash=hash_key(raw))


def prefix_of(raw: str) -> str | None:
    if not raw.startswith(KEY_PREFIX):
        return None
    prefix, sep, _ = raw[len(KEY_PREFIX) :].partition("_")
    return prefix if sep and len(prefix) == 12 else None


def matches(raw: str, secret_hash: str) -> bool:
    return hmac.compare_digest(hash_key(raw), secret_hash)
