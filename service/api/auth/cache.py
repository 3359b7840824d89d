"""Verified API keys kept for `Settings.api_key_cache_s`, so a poll costs no key query.

Only keys found valid are kept (a bad key always reaches the database), by the sha256 of the raw key or
by the session id of a dashboard cookie. A key revoked by another process (`passk keys revoke`) is still
accepted here until its entry expires: revocation lags by at most the lifetime. `revoke_key` in this
process drops it from every cache at once.
"""

from __future__ import annotations

import hashlib
import time
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar


class _HasKeyId(Protocol):
    key_id: uuid.UUID


P = TypeVar("P", bound=_HasKeyId)

_LIVE: weakref.WeakSet[VerifiedKeys] = weakref.WeakSet()  # type: ignore[type-arg]


class VerifiedKeys(Generic[P]):
    """Principals by credential for ttl_s seconds after they were verified; at most `kept` of them."""

    def __init__(self, ttl_s: float, kept: int = 10_000, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.kept = kept
        self.clock = clock
        self._entries: OrderedDict[str, tuple[float, P]] = OrderedDict()
        _LIVE.add(self)

    @staticmethod
    def of_raw(raw: str) -> str:
        return "key:" + hashlib.sha256(raw.encode()).hexdigest()

    @staticmethod
    def of_session(session_id: uuid.UUID) -> str:
        return f"session:{session_id}"

    def get(self, credential: str) -> P | None:
        found = self._entries.get(credential)
        if found is None:
            return None
        if self.clock() >= found[0]:
            del self._entries[credential]
            return None
        return found[1]

    def put(self, credential: str, principal: P) -> None:
        if self.ttl_s <= 0:
            return
        self._entries[credential] = (self.clock() + self.ttl_s, principal)
        self._entries.move_to_end(credential)
        while len(self._entries) > self.kept:
            self._entries.popitem(last=False)

    def forget(self, key_id: uuid.UUID) -> None:
        for credential in [c for c, (_, principal) in self._entries.items() if principal.key_id == key_id]:
            del self._entries[credential]

    def forget_credential(self, credential: str) -> None:
        self._entries.pop(credential, None)


def forget_everywhere(key_id: uuid.UUID) -> None:
    """Drop a key from every cache of this process (called when it is revoked here)."""
    for cache in list(_LIVE):
        cache.forget(key_id)


def forget_session_everywhere(session_id: uuid.UUID) -> None:
    """Drop a dashboard session from every cache of this process (called when it ends here)."""
    for cache in list(_LIVE):
        cache.forget_credential(VerifiedKeys.of_session(session_id))
