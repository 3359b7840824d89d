"""Projects keep their objects apart, on every route (real PostgreSQL, the app over HTTP).

The walk below reads the app's OpenAPI document and calls every operation as a second project would, with the
first project's objects in every parameter that names one: each must answer 404, as for an object that does
not exist (never 403: existence is not revealed), and must leave the object as it was; a listing must not list
them. The first project, calling the same operations, must not get a 404 (the walk reaches real objects). A new
route whose parameters the walk cannot classify fails here until it is classified, so no route is added without
its ownership being tried. The dashboard's pages (not in the document) are walked from the app's routes.
"""

from __future__ import annotations

import re
import secrets
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from service.api.auth.keys import SCOPES
from service.api.auth.principal import ADMIN
from service.api.dashboard.router import router as dashboard_router
from tests.conftest import client_for, create_dataset, create_run, problem, project_key, set_verdicts

# Path parameters that name an object, and which of a team's objects fills them.
PATH_OBJECTS = {"run_id": "run", "dataset_id": "dataset", "rule": "rule", "session_id": "session",
                "problem_id": "problem", "name": "stream"}
# Query parameters that name an object: (which object, whether the route is a listing that filters by it: then
# another project's object lists nothing instead of a 404).
QUERY_OBJECTS = {"base": ("run", False), "candidate": ("run", False), "runs": ("run", False), "rule": ("rule", False),
                 "dataset_id": ("dataset", True), "dataset": ("dataset", False), "stream": ("stream", True)}
# Query parameters that name no object of their own (checked so that a new one must be classified).
QUERY_PLAIN = {"k", "method", "confidence", "resamples", "seed", "plugin", "group_by", "tag_prefix", "diversity",
               "bins", "model", "status", "tag", "archived", "q", "id_prefix", "sort", "limit", "offset", "verdict",
               "cursor", "include", "flagged", "flag", "after", "intersection", "permutations", "items_limit", "wait",
               "name", "project", "streams", "window_s", "buckets"}
# A query parameter that names something inside an object the path names (a run's problem by its key).
QUERY_WITHIN = {"problem_id"}
# Operations that create the caller's own objects and read none of anyone else's by a parameter; each is tried
# with its own test (posting runs on another project's dataset, names another project took).
CREATES = {("POST", "/v1/datasets"), ("POST", "/v1/runs"), ("POST", "/v1/release-rules"), ("POST", "/run_code"),
           ("POST", "/v1/judge"),
           ("POST", "/v1/session"), ("DELETE", "/v1/session")}
# Read on connections of their own, which do not see this test's uncommitted rows: their positive control (and a
# 404 that means something) is in tests/e2e/test_projects.py, against committed rows over real HTTP.
OWN_CONNECTION = {("GET", "/v1/runs/{run_id}/events")}
BODIES = {("PATCH", "/v1/runs/{run_id}"): {"display_name": "renamed by another project", "archived": True},
          ("PATCH", "/v1/datasets/{dataset_id}"): {"shared": True, "hidden_tests": False}}


@dataclass
class Team:
    key: str
    http: httpx.AsyncClient
    project: str
    objects: dict[str, str] = field(default_factory=dict)
    secrets: set[str] = field(default_factory=set)


async def _team(app: FastAPI, db_session: AsyncSession, project: str) -> Team:
    key = await project_key(db_session, project)
    team = Team(key, client_for(app, key), project)
    mark = secrets.token_hex(4)
    dataset = await create_dataset(team.http, ["p0", "p1"], name=f"{project}-data-{mark}")
    model = f"{project}-model-{mark}"
    run = await create_run(team.http, dataset["id"], {"p0": 2, "p1": 2}, model=model, checkpoint="ckpt-1", step=1)
    for key_ in ("p0", "p1"):
        await set_verdicts(db_session, run["id"], key_, ["passed", "failed"])
    # A stream: a run of its own that a /v1/judge call with X-Passk-Stream would have made.
    streamed = await create_run(team.http, dataset["id"], {"p0": 1}, model=model)
    stream = f"{project}-stream-{mark}"
    await db_session.execute(text("UPDATE runs SET stream = :stream WHERE id = :id"), {"stream": stream, "id": streamed["id"]})
    await set_verdicts(db_session, streamed["id"], "p0", ["passed"])
    rule = (await team.http.post("/v1/release-rules", json={
        "name": f"{project}-gate-{mark}", "clauses": [{"metric": "pass_at_k", "limit": "max_drop", "threshold": 0.05}],
    })).json()
    login = await team.http.post("/v1/session", json={"api_key": key})
    assert login.status_code == 200, login.text
    session_id = (await team.http.get("/v1/sessions")).json()[0]["id"]
    team.objects = {"run": run["id"], "dataset": dataset["id"], "rule": rule["name"], "session": session_id,
                    "problem": "p0", "stream": stream}
    team.secrets = {run["id"], dataset["id"], dataset["name"], rule["id"], rule["name"], session_id, model, stream,
                    streamed["id"]}
    team.http.cookies.clear()  # the key alone from here on
    return team


@pytest.fixture
async def teams(app: FastAPI, db_session: AsyncSession) -> Any:
    a = await _team(app, db_session, "team-a")
    b = await _team(app, db_session, "team-b")
    try:
        yield a, b
    finally:
        await a.http.aclose()
        await b.http.aclose()


def _operations(app: FastAPI) -> list[tuple[str, str, dict[str, Any]]]:
    document = app.openapi()
    return [(method.upper(), path, operation) for path, item in document["paths"].items()
            for method, operation in item.items() if method in ("get", "post", "put", "patch", "delete")]


def _url(path: str, team: Team) -> str:
    def fill(match: re.Match[str]) -> str:
        name = match.group(1).split(":")[0]
        assert name in PATH_OBJECTS, f"path parameter {name!r} of {path}: classify it in PATH_OBJECTS"
        return team.objects[PATH_OBJECTS[name]]
    return re.sub(r"\{([^}]+)\}", fill, path)


def _query_objects(method: str, path: str, operation: dict[str, Any]) -> list[str]:
    named = []
    for parameter in operation.get("parameters", []):
        if parameter["in"] != "query":
            continue
        name = parameter["name"]
        if name in QUERY_OBJECTS:
            named.append(name)
        else:
            assert name in QUERY_PLAIN | QUERY_WITHIN, (
                f"query parameter {name!r} of {method} {path}: classify it (QUERY_OBJECTS if it names an object)")
    return named


def _order(entry: tuple[str, str, dict[str, Any]]) -> int:
    """Reads first, then changes, then ending a session."""
    method, path, _ = entry
    if "session" in path and method == "DELETE":
        return 4
    return 0 if method == "GET" else 2 if method == "DELETE" or path.endswith("/cancel") else 1


async def test_another_projects_objects_are_404_on_every_route(app: FastAPI, teams: tuple[Team, Team]) -> None:
    a, b = teams
    tried: set[tuple[str, str]] = set()
    listings: list[tuple[str, str]] = []
    for method, path, operation in sorted(_operations(app), key=_order):
        query_objects = _query_objects(method, path, operation)
        if "{" in path:
            # B names A's objects in the path; anything the query names is B's own.
            own = {name: b.objects[QUERY_OBJECTS[name][0]] for name in query_objects}
            url = _url(path, a)
            response = await b.http.request(method, url, params=own, json=BODIES.get((method, path)))
            assert response.status_code == 404, (method, path, response.status_code, response.text)
            assert not [s for s in a.secrets if s in response.text and s not in url], (method, path, response.text)
            tried.add((method, path))
        elif query_objects:
            for name in query_objects:
                whose, listing = QUERY_OBJECTS[name]
                params = {other: b.objects[QUERY_OBJECTS[other][0]] for other in query_objects}
                # A list of runs: B's own and A's (a view over several runs needs two).
                params[name] = f"{b.objects[whose]},{a.objects[whose]}" if name == "runs" else a.objects[whose]
                response = await b.http.request(method, path, params=params)
                if listing:
                    assert response.status_code == 200, (method, path, name, response.text)
                    assert not any(s in response.text for s in a.secrets - {a.objects[whose]}), (method, path, name)
                    assert not response.json()["items"], (method, path, name, response.text)
                else:
                    assert response.status_code == 404, (method, path, name, response.status_code, response.text)
            tried.add((method, path))
        elif (method, path) in CREATES:
            continue
        else:
            assert method == "GET", f"{method} {path} names no object: classify it (CREATES, or give it a parameter)"
            response = await b.http.get(path)
            assert response.status_code == 200, (path, response.text)
            leaked = [s for s in a.secrets if s in response.text]
            assert not leaked, (path, leaked)
            listings.append((method, path))
            tried.add((method, path))

    # Nothing of A's changed: not renamed, archived, cancelled, shared, or logged out.
    run = (await a.http.get(f"/v1/runs/{a.objects['run']}")).json()
    assert (run["status"], run["display_name"], run["archived"]) == ("queued", None, False), run
    assert (await a.http.get(f"/v1/datasets/{a.objects['dataset']}")).json()["shared"] is False
    assert [s["id"] for s in (await a.http.get("/v1/sessions")).json()] == [a.objects["session"]]

    # A's listings list A's objects, so B's were checked where something could have leaked.
    for _, path in listings:
        if path in ("/v1/runs", "/v1/datasets", "/v1/release-rules", "/v1/sessions"):
            response = await a.http.get(path)
            assert any(s in response.text for s in a.secrets), path
    # A reaches every one of them (no 404): the walk named real objects.
    for method, path, operation in sorted(_operations(app), key=_order):
        if (method, path) not in tried or (method, path) in listings or (method, path) in OWN_CONNECTION:
            continue
        params = {name: a.objects[QUERY_OBJECTS[name][0]] for name in _query_objects(method, path, operation)}
        response = await a.http.request(method, _url(path, a), params=params, json=BODIES.get((method, path)))
        assert response.status_code != 404, (method, path, response.text)
    assert {("GET", "/v1/runs/{run_id}/events"), ("DELETE", "/v1/runs/{run_id}"), ("PATCH", "/v1/runs/{run_id}"),
            ("POST", "/v1/runs/{run_id}/cancel"), ("GET", "/v1/compare")} <= tried


def _page_routes() -> list[str]:
    """Every page of the dashboard (its router: the pages are left out of the OpenAPI document)."""
    return [route.path for route in dashboard_router.routes if isinstance(route, APIRoute) and "GET" in route.methods]


async def test_another_projects_runs_are_404_on_the_dashboard(app: FastAPI, teams: tuple[Team, Team]) -> None:
    a, b = teams
    pages = _page_routes()
    assert "/runs/{run_id}" in pages and "/runs/{run_id}/problems/{problem_id:path}" in pages
    for path in pages:
        if "{" in path:
            as_b = await b.http.get(_url(path, a))
            assert as_b.status_code == 404, (path, as_b.status_code)
            assert a.objects["run"] not in as_b.text.replace(f"No run {a.objects['run']}.", "")
            assert (await a.http.get(_url(path, a))).status_code == 200, path
        else:
            page = await b.http.get(path)
            assert page.status_code == 200, (path, page.status_code)
            assert not [s for s in a.secrets if s in page.text], path


async def test_a_run_goes_only_on_a_dataset_the_project_may_read(app: FastAPI, teams: tuple[Team, Team]) -> None:
    a, b = teams
    body = {"model": "m", "sampling": {"temperature": 0}, "samples": [{"problem_id": "p0", "completion": "  return 1\n"}]}
    others = await b.http.post("/v1/runs", json={**body, "dataset_id": a.objects["dataset"]})
    missing = await b.http.post("/v1/runs", json={**body, "dataset_id": str(uuid.uuid4())})
    assert others.status_code == missing.status_code == 422
    assert others.json()["detail"][0]["msg"] == f"dataset {a.objects['dataset']} not found"
    # Shared, A's dataset is B's to read and run against, not to change.
    assert (await a.http.patch(f"/v1/datasets/{a.objects['dataset']}", json={"shared": True})).status_code == 200
    read = await b.http.get(f"/v1/datasets/{a.objects['dataset']}")
    assert read.status_code == 200 and (read.json()["project"], read.json()["own"]) == ("team-a", False)
    run = await b.http.post("/v1/runs", json={**body, "dataset_id": a.objects["dataset"]})
    assert run.status_code == 202, run.text
    changed = await b.http.patch(f"/v1/datasets/{a.objects['dataset']}", json={"shared": False, "hidden_tests": True})
    assert changed.status_code == 403 and "read-only" in changed.json()["detail"]
    assert (await b.http.patch(f"/v1/datasets/{a.objects['dataset']}", json={})).status_code == 403
    assert (await a.http.patch(f"/v1/datasets/{a.objects['dataset']}", json={})).json()["shared"] is True
    # B's run on it is B's: A does not see it.
    assert (await a.http.get(f"/v1/runs/{run.json()['id']}")).status_code == 404
    assert run.json()["id"] not in (await a.http.get("/v1/runs")).text
    # Unshared again: B's run stays B's, the dataset is gone for B.
    assert (await a.http.patch(f"/v1/datasets/{a.objects['dataset']}", json={"shared": False})).status_code == 200
    assert (await b.http.get(f"/v1/datasets/{a.objects['dataset']}")).status_code == 404
    assert (await b.http.get(f"/v1/runs/{run.json()['id']}")).json()["dataset_id"] == a.objects["dataset"]


async def test_names_are_the_projects_own(app: FastAPI, teams: tuple[Team, Team]) -> None:
    """A name never reaches another project's dataset or rule, whoever wrote it first or last."""
    a, b = teams
    a_dataset = (await a.http.get(f"/v1/datasets/{a.objects['dataset']}")).json()
    # B posts a dataset under A's name (shared, even) whose tests check nothing, after A.
    squat = await create_dataset(b.http, ["p0", "p1"], name=a_dataset["name"], shared=True)
    found = (await a.http.get("/v1/datasets", params={"name": a_dataset["name"]})).json()
    assert [d["id"] for d in found["items"]] == [a_dataset["id"]]
    assert [d["id"] for d in (await b.http.get("/v1/datasets", params={"name": a_dataset["name"]})).json()["items"]] == [squat["id"]]
    by_project = await a.http.get("/v1/datasets", params={"name": a_dataset["name"], "project": "team-b"})
    assert [d["id"] for d in by_project.json()["items"]] == [squat["id"]]  # asked for by its project: shared
    # B takes A's rule name first, with a lenient rule; A's own rule of that name is A's.
    lenient = {"name": "ship-gate", "clauses": [{"metric": "pass_at_k", "limit": "max_drop", "threshold": 1.0}]}
    strict = {"name": "ship-gate", "clauses": [{"metric": "pass_at_k", "limit": "max_drop", "threshold": 0.0}]}
    assert (await b.http.post("/v1/release-rules", json=lenient)).status_code == 201
    mine = await a.http.post("/v1/release-rules", json=strict)
    assert mine.status_code == 201, mine.text
    got = (await a.http.get("/v1/release-rules/ship-gate")).json()
    assert (got["id"], got["clauses"][0]["threshold"]) == (mine.json()["id"], 0.0)
    evaluated = await a.http.get("/v1/release-rules/ship-gate/evaluate",
                                 params={"base": a.objects["run"], "candidate": a.objects["run"]})
    assert evaluated.json()["rule"]["id"] == mine.json()["id"], evaluated.text
    # Another project's rule by id is not found either.
    assert (await a.http.get(f"/v1/release-rules/{(await b.http.get('/v1/release-rules/ship-gate')).json()['id']}")).status_code == 404


async def test_idempotency_keys_are_the_projects(app: FastAPI, teams: tuple[Team, Team]) -> None:
    a, b = teams
    headers = {"Idempotency-Key": "nightly-1"}
    body = {"name": "same-body", "problems": [problem("x")]}
    first = await a.http.post("/v1/datasets", json=body, headers=headers)
    other = await b.http.post("/v1/datasets", json=body, headers=headers)
    assert first.status_code == other.status_code == 201
    assert first.json()["id"] != other.json()["id"] and other.json()["project"] == "team-b"
    again = await a.http.post("/v1/datasets", json=body, headers=headers)
    assert again.json() == first.json()


async def test_an_operator_sees_every_project(app: FastAPI, db_session: AsyncSession, teams: tuple[Team, Team]) -> None:
    a, _ = teams
    operator = await project_key(db_session, "operators", [*SCOPES, ADMIN])
    async with client_for(app, operator) as admin:
        assert (await admin.get(f"/v1/runs/{a.objects['run']}")).status_code == 200
        assert a.objects["run"] in (await admin.get("/v1/runs")).text
        assert (await admin.get(f"/v1/runs/{a.objects['run']}/samples")).status_code == 200
        # A name is still the operator's own project's.
        assert (await admin.get(f"/v1/release-rules/{a.objects['rule']}")).status_code == 404
    reader = await project_key(db_session, "team-a", ["read"])
    async with client_for(app, reader) as read_only:
        assert (await read_only.get(f"/v1/runs/{a.objects['run']}")).status_code == 200
        assert (await read_only.post(f"/v1/runs/{a.objects['run']}/cancel")).status_code == 403


async def test_existing_rows_belong_to_the_default_project(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    """The `client` fixture's key is a key as made before projects: the default project's."""
    dataset = await create_dataset(client, ["p"])
    assert dataset["project"] == "default"
    project = (await db_session.execute(text("SELECT p.name FROM datasets d JOIN projects p ON p.id = d.project_id "
                                             "WHERE d.id = :id"), {"id": dataset["id"]})).scalar_one()
    assert project == "default"
