"""Who is calling: an API key (header) or a dashboard session cookie, and what it may do.

`authorize` is attached to whole routers in app.py, so a new route cannot be
added without it by accident: reads need the `read` scope, writes `submit` (`admin` may do both, in every
project). Endpoints take the admitted caller as `CallerDep` and hand it to their service: ownership is
decided in the repositories (service/projects/ownership.py).
"""

from __future__ import annotations

import base64
import binascii
import uuid
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession

from service.api.auth import repository
from service.api.auth.cache import VerifiedKeys
from service.api.auth.sessions import SESSION_COOKIE, verify_session
from service.api.dependencies import SessionDep, app_singleton, get_settings, openapi_error
from service.core.exceptions import APIError
from service.api.auth.principal import Principal
from service.core.exceptions import Forbidden

READ_METHODS = {"GET", "HEAD", "OPTIONS"}

# Documented on every protected route, so clients (and schema fuzzers) know them.
AUTH_RESPONSES: dict[int | str, dict[str, object]] = {
    401: openapi_error("No API key, or an invalid or revoked one", {"detail": "invalid or revoked API key"}),
    403: openapi_error("The key lacks the scope this route needs", {"detail": "API key 'ci' lacks the 'submit' scope"}),
    413: openapi_error("Request body over the server's limit", {"detail": "request body exceeds the limit of 268435456 bytes"}),
}


# Declared in OpenAPI (securitySchemes, and `security` on every protected operation), so /docs
# offers "Authorize" and sends the key with "Try it out". The key itself is read by _raw_key.
BEARER_SCHEME = HTTPBearer(
    auto_error=False, scheme_name="apiKey", bearerFormat="pk_…",
    description="An API key (`passk keys create`), sent as `Authorization: Bearer <key>`.",
)
HEADER_SCHEME = APIKeyHeader(
    name="X-API-Key", auto_error=False, scheme_name="apiKeyHeader", description="The same key in an X-API-Key header."
)


class Unauthorized(APIError):
    status_code = 401
    headers = {"WWW-Authenticate": "Bearer"}


def _raw_key(request: Request) -> str | None:
    """The key a request presents: `Authorization: Bearer <key>`, `X-API-Key: <key>`, or HTTP Basic credentials
    whose password is the key (any user name), which clients send by themselves for a URL such as
    `http://passk:<key>@host/run_code` (verl's sandbox_fusion reward, with nothing but its URL changed)."""
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    if scheme.lower() == "basic" and value.strip():
        try:
            _, _, password = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            raise Unauthorized("malformed Basic credentials") from None
        if password:
            return password
    return request.headers.get("x-api-key") or None


def _verified_keys(request: Request) -> VerifiedKeys[Principal]:
    return app_singleton(request, "verified_keys", lambda: VerifiedKeys(get_settings(request).api_key_cache_s))


def session_of(request: Request) -> uuid.UUID | None:
    """The dashboard session a request's cookie names, if it is validly signed and unexpired."""
    cookie = request.cookies.get(SESSION_COOKIE)
    return verify_session(get_settings(request).session_secret(), cookie) if cookie else None


async def optional_principal(request: Request, session: AsyncSession) -> Principal | None:
    """The caller, if any credential is presented and valid; raises 401 for a bad key.

    A key verified in the last `api_key_cache_s` seconds is taken from this process's cache (service/api/auth/cache.py).
    """
    cache = _verified_keys(request)
    raw = _raw_key(request)
    if raw is not None:
        credential = cache.of_raw(raw)
        if (principal := cache.get(credential)) is not None:
            return principal
        principal = await repository.find_active_by_raw(session, raw)
        if principal is None:
            raise Unauthorized("invalid or revoked API key")
        cache.put(credential, principal)
        return principal
    session_id = session_of(request)
    if session_id is not None:
        credential = cache.of_session(session_id)
        if (principal := cache.get(credential)) is not None:
            return principal
        principal = await repository.key_of_session(session, session_id)
        if principal is not None:
            cache.put(credential, principal)
            return principal
    return None


async def authenticate(
    request: Request,
    session: SessionDep,
    _bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER_SCHEME)] = None,
    _header: Annotated[str | None, Depends(HEADER_SCHEME)] = None,
) -> Principal:
    """Any valid credential, whatever its scopes (a key's own sessions are its holder's to see and end)."""
    return await _admit(request, session, None)


def require(principal: Principal | None, scope: str | None) -> Principal:
    if principal is None:
        raise Unauthorized("an API key is required: send 'Authorization: Bearer <key>' (create one with `passk keys create`)")
    if scope is not None and not principal.has(scope):
        raise Forbidden(f"API key '{principal.name}' lacks the '{scope}' scope")
    return principal


async def authorize(
    request: Request,
    session: SessionDep,
    _bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER_SCHEME)] = None,
    _header: Annotated[str | None, Depends(HEADER_SCHEME)] = None,
) -> Principal:
    return await _admit(request, session, "read" if request.method in READ_METHODS else "submit")


async def _admit(request: Request, session: AsyncSession, scope: str | None) -> Principal:
    principal = require(await optional_principal(request, session), scope)
    # The endpoints' CallerDep reads it from here: every service and repository takes it (ownership).
    request.state.principal = principal
    return principal


def current_principal(request: Request) -> Principal:
    """The caller admitted by the router's `authorize` (or `authenticate`) dependency."""
    principal = getattr(request.state, "principal", None)
    if not isinstance(principal, Principal):
        # A route mounted without authorize: a programming error, never an anonymous caller.
        raise RuntimeError(f"{request.url.path} is not mounted behind authorize")
    return principal


CallerDep = Annotated[Principal, Depends(current_principal)]
