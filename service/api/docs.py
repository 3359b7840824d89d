"""/docs (Swagger UI) and /redoc served with their assets from passk itself, never from a CDN.

The assets come from the `fastapi-offline` distribution (its static/ folder holds the Swagger UI
bundle, its CSS and the ReDoc standalone bundle), installed like any other dependency: nothing is
copied into this repository, and the pages work on a machine with no route to the internet.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_URL = "/docs-assets"
ASSETS_DIR = Path(str(files("fastapi_offline") / "static"))
FAVICON_URL = "/static/favicon.svg"

# validatorUrl null: Swagger UI would otherwise send the schema to an online validator.
# persistAuthorization: the key entered under "Authorize" survives a reload.
SWAGGER_PARAMETERS = {"validatorUrl": None, "persistAuthorization": True, "tryItOutEnabled": False}

# Same origin only, enforced by the browser: ReDoc's sidebar links a logo from its vendor's CDN,
# which this policy keeps from loading. Both pages carry one inline block (FastAPI's templates),
# ReDoc styles inline and runs its search in a blob: worker.
DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)


def _same_origin_only(response: HTMLResponse) -> HTMLResponse:
    response.headers["Content-Security-Policy"] = DOCS_CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def _page(request: Request, render: Callable[..., HTMLResponse], openapi_url: str, title: str,
          urls: dict[str, str], **options: Any) -> HTMLResponse:
    """One docs page: the schema and every asset URL under the app's root path, served same-origin only."""
    root = request.scope.get("root_path", "")
    rooted = {name: f"{root}{url}" for name, url in urls.items()}
    return _same_origin_only(render(openapi_url=f"{root}{openapi_url}", title=title, **rooted, **options))


def install(app: FastAPI) -> None:
    """Add /docs, /docs/oauth2-redirect, /redoc and the assets they load (create the app with docs_url=None)."""
    app.mount(ASSETS_URL, StaticFiles(directory=ASSETS_DIR), name="docs-assets")
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        urls = {
            "swagger_js_url": f"{ASSETS_URL}/swagger-ui-bundle.js",
            "swagger_css_url": f"{ASSETS_URL}/swagger-ui.css",
            "swagger_favicon_url": FAVICON_URL,
            "oauth2_redirect_url": "/docs/oauth2-redirect",
        }
        return _page(request, get_swagger_ui_html, openapi_url, f"{app.title} - API", urls,
                     swagger_ui_parameters=SWAGGER_PARAMETERS)

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    async def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        urls = {"redoc_js_url": f"{ASSETS_URL}/redoc.standalone.js", "redoc_favicon_url": FAVICON_URL}
        return _page(request, get_redoc_html, openapi_url, f"{app.title} - ReDoc", urls, with_google_fonts=False)
