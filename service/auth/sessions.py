"""Dashboard session cookies: `<key id>.<expiry>.<hmac>`, signed with PASSK_SECRET_KEY."""

from __future__ import annotations

import hashlib
import hmac
import time
import uuid

SESSION_COOKIE = "passk_session"
SESSION_TTL_S = 12 * 3600


def sign_session(secret: str, key_id: uuid.UUID, ttl_s: int = SESSION_TTL_S) -> str:
    payload = f"{key_id}.{int(time.time()) + ttl_s}"
    return f"{payload}.{_mac(secret, payload)}"


def verify_session(secret: str, token: str) -> uuid.UUID | None:
    """The key id in a valid, unexpired cookie; None otherwise."""
    payload, _, mac = token.rpartition(".")
    if not payload or not hmac.compare_digest(mac, _mac(secret, payload)):
        return None
    key_id, _, expires = payload.partition(".")
    try:
        if int(expires) < time.time():
            return None
        return uuid.UUID(key_id)
    except ValueError:
        return None


def _mac(secret: str, payload: str) -> str:
    return hmac.new(secret.encode(), payload.encode(), hashlib.sha256).hexdigest()
