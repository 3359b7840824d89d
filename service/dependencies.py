"""Request dependencies, and the errors the service layer raises for app.py to render.

The service layer never commits: `get_session` commits once, after the path
operation returns and *before* the response is sent (scope="function"), so a
failed commit is a 5xx instead of a 2xx for data that was never stored.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from service.database import session_scope
from service.settings import Settings
from service.settings import get_settings as _default_settings

# session_scope is the one commit/rollback policy; as a context manager, an exception raised
# by the endpoint is thrown into it (rollback) rather than left to garbage collection.
_session_scope = asynccontextmanager(session_scope)


async def get_session(request: Request) -> AsyncIterator[AsyncSession]:
    async with _session_scope(request.app.state.sessionmaker) as session:
        yield session


def get_settings(request: Request) -> Settings:
    settings = getattr(request.app.state, "settings", None)
    return settings if isinstance(settings, Settings) else _default_settings()


SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]


async def commit_now(session: AsyncSession) -> None:
    """Commit the request's one transaction before the response, for a route that then waits on what it
    stored (`POST /v1/runs?wait=`, `POST /run_code`); get_session's own commit is then a no-op."""
    await session.commit()
SettingsDep = Annotated[Settings, Depends(get_settings)]


class APIError(Exception):
    """An error with an HTTP status and a human-readable `detail`."""

    status_code = 400

    def __init__(self, detail: Any) -> None:
        super().__init__(detail)
        self.detail = detail


class NotFound(APIError):
    status_code = 404

    def __init__(self, resource: str, id_: object) -> None:
        super().__init__(f"{resource} {id_} not found")


class Conflict(APIError):
    status_code = 409


class InvalidInput(APIError):
    """422 in the same shape as FastAPI's own validation errors, so clients parse one format."""

    status_code = 422

    def __init__(self, loc: Sequence[str | int], msg: str, input_: Any = None) -> None:
        super().__init__([{"type": "value_error", "loc": list(loc), "msg": msg, "input": input_}])


def openapi_error(description: str, example: Any) -> dict[str, Any]:
    """An error response for the OpenAPI `responses` of a route, with an example body."""
    return {"description": description, "content": {"application/json": {"example": example}}}


def openapi_422(description: str, example: dict[str, Any] | None = None) -> dict[str, Any]:
    """A documented 422 that keeps FastAPI's HTTPValidationError schema (a bare override would drop it)."""
    media: dict[str, Any] = {"schema": {"$ref": "#/components/schemas/HTTPValidationError"}}
    if example is not None:
        media["example"] = example
    return {"description": description, "content": {"application/json": media}}
