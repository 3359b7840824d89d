"""/guide/: the documentation site (docs/, rendered by `passk docs build`), served by the API itself.

An operator with no internet access reads the same guide as everyone else: the site is static files built
with MkDocs' offline plugin (search from a bundled index, no web fonts), served same-origin only.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.types import Scope

GUIDE_URL = "/guide"

# Material's pages carry inline scripts and styles and run their search in a worker; nothing leaves the origin.
GUIDE_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; "
    "object-src 'none'; base-uri 'self'; frame-ancestors 'none'"
)

NOT_BUILT = """<!doctype html><meta charset="utf-8"><title>passk guide not built</title>
<p>The guide has not been built on this server. Run <code>passk docs build</code> (it needs
<code>pip install 'passk[docs]'</code>) and restart the API; it is also at docs/ in passk's sources.</p>"""


class GuideFiles(StaticFiles):
    async def get_response(self, path: str, scope: Scope):
        response = await super().get_response(path, scope)
        response.headers["Content-Security-Policy"] = GUIDE_CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response


def install(app: FastAPI, directory: Path) -> None:
    """Serve the built site at /guide/ (and /guide redirects there); a short page says how to build a missing one."""

    @app.get(GUIDE_URL, include_in_schema=False)
    async def guide_root() -> RedirectResponse:
        return RedirectResponse(f"{GUIDE_URL}/")

    if (directory / "index.html").is_file():
        app.mount(GUIDE_URL, GuideFiles(directory=directory, html=True), name="guide")
        return

    @app.get(GUIDE_URL + "/{path:path}", include_in_schema=False)
    async def guide_missing(path: str) -> HTMLResponse:
        return HTMLResponse(NOT_BUILT, status_code=404)
