"""Dashboard pages: `/`, `/leaderboard`, `/runs/{id}`, `/runs/{id}/problems/{problem_id}`, `/compare`,
`/languages`, `/checkpoints`, `/streams`, `/login`.

Each page is a small server-rendered shell; its script under /static fetches the /v1 JSON API
(same origin, session cookie) for the data, so no page ships every sample to the browser.
Pages need a logged-in session (or an API key header); without one they redirect to /login.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlsplit

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from service.api.auth.dependencies import Unauthorized, optional_principal
from service.api.dashboard import queries
from service.api.dependencies import SessionDep
from service.core.flags import FLAGS
from service.api.auth.principal import Principal

PACKAGE_DIR = Path(__file__).resolve().parent
STATIC_DIR = PACKAGE_DIR / "static"
TEMPLATE_DIR = PACKAGE_DIR / "templates"

# Everything is same-origin: no CDN, no inline script (data goes in <script type="application/json">).
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def _asset_version() -> str:
    """Changes whenever a static file does, so browsers never run a stale script against a new page."""
    digest = hashlib.sha256()
    for path in sorted(STATIC_DIR.rglob("*")):
        if path.is_file():
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


templates = Jinja2Templates(directory=TEMPLATE_DIR)
templates.env.globals["asset_version"] = _asset_version()

router = APIRouter(include_in_schema=False)


def _render(request: Request, name: str, context: dict[str, Any], status_code: int = 200) -> HTMLResponse:
    return templates.TemplateResponse(
        request, name, {"page": name.removesuffix(".html"), **context}, status_code=status_code, headers=SECURITY_HEADERS
    )


def _safe_next(target: str | None) -> str:
    """Only same-site paths: `/runs/x` yes, `//evil.example` or `https://...` no."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    parts = urlsplit(target)
    return "/" if parts.scheme or parts.netloc else target


def _login_redirect(request: Request) -> RedirectResponse:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303, headers=SECURITY_HEADERS)


async def _viewer(request: Request, session: SessionDep) -> Principal | None:
    """The logged-in key, or None (no cookie, an expired or forged one, or a bad key header)."""
    try:
        principal = await optional_principal(request, session)
    except Unauthorized:
        return None
    return principal


def _gate(request: Request, principal: Principal | None) -> Response | None:
    if principal is None:
        return _login_redirect(request)
    if "read" not in principal.scopes:
        return _render(
            request,
            "error.html",
            {"viewer": principal, "title": "Not allowed", "message": f"API key '{principal.name}' lacks the 'read' scope."},
            status_code=403,
        )
    return None


class PageDenied(Exception):
    """Raised by a page's dependency: the response to send instead of the page (login, 403)."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status_code)
        self.response = response


async def _reader(request: Request, session: SessionDep) -> Principal:
    """Every page's gate: the viewer, who must be logged in with the 'read' scope."""
    principal = await _viewer(request, session)
    if (denied := _gate(request, principal)) is not None:
        raise PageDenied(denied)
    return principal  # type: ignore[return-value]


ReaderDep = Annotated[Principal, Depends(_reader)]


def _not_found(request: Request, principal: Principal, message: str) -> HTMLResponse:
    return _render(request, "error.html", {"viewer": principal, "title": "Not found", "message": message}, 404)


@router.get("/login", response_class=HTMLResponse)
async def login_page(request: Request, session: SessionDep, next: str | None = None) -> Response:  # noqa: A002
    principal = await _viewer(request, session)
    return _render(request, "login.html", {"viewer": principal, "next": _safe_next(next)})


@router.get("/", response_class=HTMLResponse)
async def runs_page(request: Request, session: SessionDep, principal: ReaderDep) -> Response:
    datasets, models = await queries.filter_options(session, principal)
    return _render(request, "runs.html", {"viewer": principal, "boot": {"datasets": datasets, "models": models}})


@router.get("/runs/{run_id}", response_class=HTMLResponse)
async def run_page(request: Request, run_id: str, session: SessionDep, principal: ReaderDep) -> Response:
    run = await _run_or_none(session, principal, run_id)
    if run is None:
        return _not_found(request, principal, f"No run {run_id}.")
    boot = {"run_id": str(run.id), "dataset_name": run.dataset_name, "problem_count": run.problem_count, "flags": FLAGS}
    return _render(request, "run.html", {"viewer": principal, "run": run, "boot": boot})


@router.get("/runs/{run_id}/problems/{problem_id:path}", response_class=HTMLResponse)
async def problem_page(request: Request, run_id: str, problem_id: str, session: SessionDep, principal: ReaderDep) -> Response:
    run = await _run_or_none(session, principal, run_id)
    if run is None:
        return _not_found(request, principal, f"No run {run_id}.")
    problem = await queries.problem_view(session, principal, run, problem_id)
    if problem is None:
        return _not_found(request, principal, f"Problem {problem_id!r} is not in dataset {run.dataset_name}.")
    boot = {"run_id": str(run.id), "problem_id": problem.key, "prompt": problem.prompt, "test": problem.test,
            "entry_point": problem.entry_point, "verdicts": problem.verdicts, "total": problem.total, "flags": FLAGS,
            "flagged": problem.flagged, "tests_hidden": problem.tests_hidden}
    return _render(request, "problem.html", {"viewer": principal, "run": run, "problem": problem, "boot": boot})


@router.get("/leaderboard", response_class=HTMLResponse)
async def leaderboard_page(request: Request, session: SessionDep, principal: ReaderDep) -> Response:
    datasets, _ = await queries.filter_options(session, principal)
    opens_on = await queries.last_dataset(session, principal, {d["id"] for d in datasets})
    boot = {"datasets": datasets, "default_dataset_id": opens_on, "project_id": str(principal.project_id)}
    return _render(request, "leaderboard.html", {"viewer": principal, "boot": boot})


@router.get("/compare", response_class=HTMLResponse)
async def compare_page(
    request: Request,
    session: SessionDep,
    principal: ReaderDep,
    base: str | None = None,
    candidate: str | None = None,
    k: str | None = None,
    intersection: bool = False,
) -> Response:
    datasets, _ = await queries.filter_options(session, principal)
    boot = {"base": base or "", "candidate": candidate or "", "k": k or "1", "intersection": intersection, "datasets": datasets}
    return _render(request, "compare.html", {"viewer": principal, "boot": boot})


@router.get("/languages", response_class=HTMLResponse)
async def languages_page(request: Request, principal: ReaderDep, runs: str | None = None, k: str | None = None) -> Response:
    """One model's runs in several languages side by side (GET /v1/languages/compare)."""
    return _render(request, "languages.html", {"viewer": principal, "boot": {"runs": runs or "", "k": k or "1"}})


@router.get("/checkpoints", response_class=HTMLResponse)
async def checkpoints_page(
    request: Request, session: SessionDep, principal: ReaderDep, dataset: str | None = None, model: str | None = None,
    k: str | None = None,
) -> Response:
    """One model's checkpoints on one dataset by step (GET /v1/checkpoints), with the interval of each."""
    datasets, models = await queries.filter_options(session, principal)
    boot = {"dataset": dataset or "", "model": model or "", "k": k or "1", "datasets": datasets, "models": models}
    return _render(request, "checkpoints.html", {"viewer": principal, "boot": boot})


@router.get("/streams", response_class=HTMLResponse)
async def streams_page(request: Request, principal: ReaderDep, name: str | None = None, window: str | None = None) -> Response:
    """The project's streams of /run_code and /v1/judge calls (GET /v1/streams), and one of them over time."""
    boot = {"stream": name or "", "window": window or "3600"}
    return _render(request, "streams.html", {"viewer": principal, "boot": boot})


async def _run_or_none(session: SessionDep, principal: Principal, run_id: str) -> queries.RunHeader | None:
    """The viewer's run (another project's is "No run", as a missing one is)."""
    try:
        parsed = uuid.UUID(run_id)
    except ValueError:
        return None
    return await queries.run_header(session, principal, parsed)


class AssetFiles(StaticFiles):
    """Serves `/static/v-<version>/<file>` (and plain `/static/<file>`) from static/.

    Pages link `/static/v-<asset_version>/run.js`; its relative `import "./common.js"` then resolves
    under the same versioned prefix, so every module is loaded once per page and a new release
    never mixes with cached scripts of an old one (versioned URLs are cached as immutable).
    """

    def get_path(self, scope: Any) -> str:
        path = super().get_path(scope)
        head, sep, rest = path.partition(os.sep)
        return rest if sep and head.startswith("v-") else path

    def file_response(self, full_path: Any, stat_result: os.stat_result, scope: Any, status_code: int = 200) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers["X-Content-Type-Options"] = "nosniff"
        versioned = scope.get("path", "").startswith("/static/v-")
        response.headers["Cache-Control"] = "public, max-age=31536000, immutable" if versioned else "no-cache"
        return response


async def _denied(request: Request, exc: Exception) -> Response:
    return exc.response  # type: ignore[attr-defined]


def install(app: FastAPI) -> None:
    """Add the pages and /static to the app (one call from create_app)."""
    app.include_router(router)
    app.add_exception_handler(PageDenied, _denied)
    app.mount("/static", AssetFiles(directory=STATIC_DIR), name="static")
