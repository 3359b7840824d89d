"""Dashboard login: trade an API key for a signed, httponly session cookie."""

from __future__ import annotations

from fastapi import APIRouter, Response, status
from pydantic import BaseModel, Field

from service.auth import repository
from service.auth.dependencies import Unauthorized
from service.auth.sessions import SESSION_COOKIE, SESSION_TTL_S, sign_session
from service.dependencies import SessionDep, SettingsDep, openapi_error

router = APIRouter(prefix="/v1/session", tags=["auth"])


class SessionRequest(BaseModel):
    api_key: str = Field(min_length=1, max_length=200, examples=["pk_0123456789ab_..."])


class SessionInfo(BaseModel):
    name: str
    scopes: list[str]


@router.post(
    "",
    summary="Log in with an API key (sets the dashboard session cookie)",
    response_model=SessionInfo,
    responses={401: openapi_error("Invalid or revoked API key", {"detail": "invalid or revoked API key"})},
)
async def create_session(body: SessionRequest, response: Response, session: SessionDep, settings: SettingsDep) -> SessionInfo:
    key = await repository.find_active_by_raw(session, body.api_key)
    if key is None:
        raise Unauthorized("invalid or revoked API key")
    response.set_cookie(
        SESSION_COOKIE, sign_session(settings.session_secret(), key.id), max_age=SESSION_TTL_S,
        httponly=True, samesite="strict", secure=settings.env == "production",
    )
    return SessionInfo(name=key.name, scopes=sorted(key.scopes))


@router.delete("", summary="Log out", status_code=status.HTTP_204_NO_CONTENT)
async def delete_session(response: Response) -> Response:
    response.delete_cookie(SESSION_COOKIE)
    response.status_code = status.HTTP_204_NO_CONTENT
    return response
