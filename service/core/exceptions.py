"""The errors the service layer raises, each with its HTTP status; app.py renders them.

Free of FastAPI (as Polar's exceptions.py): services and repositories raise these without importing the web
framework.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


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


class Forbidden(APIError):
    """The caller may see this but not do that: a missing scope, another project's shared dataset. What the caller
    may not see at all is NotFound instead (its existence is not revealed)."""

    status_code = 403


class Conflict(APIError):
    status_code = 409


class InvalidInput(APIError):
    """422 in the same shape as FastAPI's own validation errors, so clients parse one format."""

    status_code = 422

    def __init__(self, loc: Sequence[str | int], msg: str, input_: Any = None) -> None:
        super().__init__([{"type": "value_error", "loc": list(loc), "msg": msg, "input": input_}])
