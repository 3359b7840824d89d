"""Dashboard session cookies: `<session id>.<expiry>.<hmac>`, signed with PASSK_SECRET_KEY.

The signature keeps forged and expired cookies away from the database; the session id names a row of
`dashboard_sessions` (service/api/auth/repository.py), so logging out or revoking the row ends the session.
"""

from __future__ import annotations

import hashlib
import hmac
import time
import uuid

SESSION_COOKIE = "passk_session"
SESSION_TTL_S = 12 * 3600


def sign_session(secret: str, session_id: uuid.UUID, expires_at: float) -> str:
    payload = f"{session_id}.{int(expires_at)}"
    return f"{payload}.{_mac(secret, payload)}"


def verify_session(secret: str, token: str) -> uuid.UUID | None:
    """The session id in a validly signed, unexpired cookie; None otherwise."""
    payload, _, mac = token.rpartition(".")
    if not payload or not hmac.compare_digest(mac, _mac(secret, payload)):
        return None
    session_id, _, expires = payload.partition(".")
    try:
        if int(expires) < time.time():
            return None
        return uuid.UUID(session_id)
    except ValueError:
        return None


def _mac(secret: str, payload: str) -> str:
    return hmac.new(secret.encode(), payload.encode(), hashlib.sha256).hexdigest()
