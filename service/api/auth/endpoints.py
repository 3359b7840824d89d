"""Dashboard login: trade an API key for an httponly session cookie naming a server-side session; log out;
list and end a key's sessions."""

from __future__ import annotations

import time
import uuid
from datetime import datetime

from fastapi import APIRouter, Request, Response, status
from pydantic import BaseModel, Field

from service.api.auth import repository
from service.api.auth.dependencies import Unauthorized, session_of
from service.api.auth.sessions import SESSION_COOKIE, SESSION_TTL_S, sign_session
from service.api.dependencies import SessionDep, SettingsDep, openapi_error
from service.core.exceptions import NotFound
from service.core.settings import Settings
from service.api.auth.dependencies import CallerDep

# POST/DELETE /v1/session: logging in needs no credential but the key in the body.
router = APIRouter(prefix="/v1/session", tags=["auth"])
# /v1/sessions: a key's own sessions (mounted behind `authenticate` in app.py).
sessions_router = APIRouter(prefix="/v1/sessions", tags=["auth"])


class SessionRequest(BaseModel):
    api_key: str = Field(min_length=1, max_length=200, examples=["pk_0123456789ab_..."])


class SessionInfo(BaseModel):
    name: str
    scopes: list[str]
    project: str = Field(description="The key's project: the dashboard shows its runs, datasets and rules.")


class SessionRow(BaseModel):
    id: uuid.UUID
    created_at: datetime
    expires_at: datetime
    user_agent: str | None
    current: bool = Field(description="the session of the cookie this request carried")


def _cookie_options(request: Request, settings: Settings) -> dict[str, object]:
    """Secure in production and whenever the request came over TLS (directly, or through a proxy the server
    trusts: PASSK_FORWARDED_ALLOW_IPS)."""
    return {"httponly": True, "samesite": "strict",
            "secure": settings.env == "production" or request.url.scheme == "https"}


@router.post(
    "",
    summary="Log in with an API key (sets the dashboard session cookie)",
    response_model=SessionInfo,
    responses={401: openapi_error("Invalid or revoked API key", {"detail": "invalid or revoked API key"})},
)
async def create_session(body: SessionRequest, request: Request, response: Response, session: SessionDep,
                         settings: SettingsDep) -> SessionInfo:
    key = await repository.find_active_by_raw(session, body.api_key)
    if key is None or key.key_id is None:
        raise Unauthorized("invalid or revoked API key")
    expires_at = time.time() + SESSION_TTL_S
    row = await repository.open_session(session, key.key_id, expires_at, request.headers.get("user-agent"))
    response.set_cookie(SESSION_COOKIE, sign_session(settings.session_secret(), row.id, expires_at),
                        max_age=SESSION_TTL_S, **_cookie_options(request, settings))  # type: ignore[arg-type]
    return SessionInfo(name=key.name, scopes=sorted(key.scopes), project=key.project)


@router.delete("", summary="Log out (ends the session on the server, not only the cookie)",
               status_code=status.HTTP_204_NO_CONTENT)
async def delete_session(request: Request, response: Response, session: SessionDep, settings: SettingsDep) -> Response:
    session_id = session_of(request)
    if session_id is not None:
        await repository.revoke_session(session, session_id)
    response.delete_cookie(SESSION_COOKIE, **_cookie_options(request, settings))  # type: ignore[arg-type]
    response.status_code = status.HTTP_204_NO_CONTENT
    return response


@sessions_router.get("", summary="The caller's key's live dashboard sessions", response_model=list[SessionRow])
async def list_sessions(request: Request, session: SessionDep, principal: CallerDep) -> list[SessionRow]:
    current = session_of(request)
    return [SessionRow(id=row.id, created_at=row.created_at, expires_at=row.expires_at, user_agent=row.user_agent,
                       current=row.id == current)
            for row in await repository.list_sessions(session, principal.key_id)]


@sessions_router.delete(
    "/{session_id}", summary="End one of the caller's key's dashboard sessions", status_code=status.HTTP_204_NO_CONTENT,
    responses={404: openapi_error("No live session of this key has that id", {"detail": "session 3f2b1c9e-0000-4000-8000-000000000000 not found"})},
)
async def revoke_session(session_id: uuid.UUID, session: SessionDep, principal: CallerDep) -> Response:
    if principal.key_id is None or not await repository.revoke_session(session, session_id, principal.key_id):
        raise NotFound("session", session_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
