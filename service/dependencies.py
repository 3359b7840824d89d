"""Request dependencies, and the errors the service layer raises for app.py to render.

The service layer never commits: `get_session` commits once, after the path
operation returns and *before* the response is sent (scope="function"), so a
failed commit is a 5xx instead of a 2xx for data that was never stored.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Annotated, Any

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from service.database import session_scope
from service.settings import Settings
from service.settings import get_settings as _default_settings


async def get_session(request: Request) -> AsyncIterator[AsyncSession]:
    # Drive session_scope by hand so an exception in the endpoint is thrown
    # into it (rollback) instead of being swallowed by a plain `async for`.
    scope = session_scope(request.app.state.sessionmaker)
    session = await anext(scope)
    try:
        yield session
    except BaseException as exc:
        try:
            await scope.athrow(exc)
        except BaseException as raised:
            if raised is not exc:
                raise
        raise
    else:
        try:
            await anext(scope)
        except StopAsyncIteration:
            pass


def get_settings(request: Request) -> Settings:
    settings = getattr(request.app.state, "settings", None)
    return settings if isinstance(settings, Settings) else _default_settings()


SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]
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
