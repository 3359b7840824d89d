"""Request dependencies and OpenAPI helpers (the errors the service layer raises: service/core/exceptions.py).

The service layer never commits: `get_session` commits once, after the path
operation returns and *before* the response is sent (scope="function"), so a
failed commit is a 5xx instead of a 2xx for data that was never stored.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from service.core.database import session_scope
from service.core.exceptions import InvalidInput
from service.core.settings import Settings
from service.core.settings import get_settings as _default_settings

T = TypeVar("T")

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


async def _settings_dependency(request: Request) -> Settings:
    # Async on purpose: FastAPI runs a plain `def` dependency in a worker thread, a thread hop per request.
    return get_settings(request)


SettingsDep = Annotated[Settings, Depends(_settings_dependency)]


def app_singleton(request: Request, name: str, make: Callable[[], T]) -> T:
    """The application's one `name` (a cache, a coalescer), made by make() on first use."""
    found = getattr(request.app.state, name, None)
    if found is None:
        found = make()
        setattr(request.app.state, name, found)
    return found


def etag_matches(request: Request, etag: str) -> bool:
    """Whether the request's If-None-Match names this ETag (a 304 then answers it)."""
    return etag in (tag.strip() for tag in request.headers.get("if-none-match", "").split(","))


def openapi_error(description: str, example: Any) -> dict[str, Any]:
    """An error response for the OpenAPI `responses` of a route, with an example body."""
    return {"description": description, "content": {"application/json": {"example": example}}}


def openapi_422(description: str, example: dict[str, Any] | None = None) -> dict[str, Any]:
    """A documented 422 that keeps FastAPI's HTTPValidationError schema (a bare override would drop it)."""
    media: dict[str, Any] = {"schema": {"$ref": "#/components/schemas/HTTPValidationError"}}
    if example is not None:
        media["example"] = example
    return {"description": description, "content": {"application/json": media}}


def openapi_invalid_input(description: str, loc: list[str | int], msg: str, input_: Any) -> dict[str, Any]:
    """A documented 422 whose example is exactly what the server answers for InvalidInput(loc, msg, input_)."""
    return openapi_422(description, {"detail": InvalidInput(loc, msg, input_).detail})
