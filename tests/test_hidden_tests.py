"""Hidden tests: another project sees which case failed and how, never the case (real PostgreSQL for the API).

The samples' details are written as a worker writes them (the judges' records and messages, the program's
output); what the sandbox records for real programs is in tests/e2e/test_projects.py.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from service.api.auth.keys import SCOPES
from service.api.auth.principal import ADMIN
from service.api.hidden_tests import assertion_index, failing_case, withheld
from tests.conftest import client_for, create_run, problem, project_key

TESTS = (
    "def check(candidate):\n"
    "    assert candidate(1) == 1\n"
    "    assert candidate(\n"
    "        2\n"
    "    ) == 'SECRET-EXPECTED'\n"
    "    for x in [3]:\n"
    "        assert candidate(x) == x\n"
)


def test_an_assertion_is_numbered_in_source_order() -> None:
    assert [assertion_index(TESTS, line) for line in (2, 3, 4, 5, 7)] == [0, 1, 1, 1, 2]
    assert assertion_index(TESTS, 1) is None and assertion_index(TESTS, None) is None
    assert assertion_index("def broken(:\n", 1) is None


@pytest.mark.parametrize(("failure", "detail", "expected"), [
    ({"kind": "case", "index": 3, "input": "x", "expected": "y", "got": "z"}, "case 4 of 9 (input 'x')", ("case", 3)),
    ({"kind": "assertion", "line": 5, "source": "assert ...", "expected": "'SECRET'"}, "AssertionError", ("assertion", 1)),
    (None, "case 2 of 5 (input '7\\n'): expected '8' got '9'", ("case", 1)),  # the native judges' words
    (None, "the solution raised ValueError: case 3 of 4", (None, None)),  # the program's words count for nothing
    ({"kind": "run", "return_code": 3}, "the program exited with status 3", ("run", None)),
    (None, None, (None, None)),
])
def test_the_failing_case_is_read_from_the_judges_own_record_or_words(
    failure: dict[str, Any] | None, detail: str | None, expected: tuple[str | None, int | None]
) -> None:
    assert failing_case(failure, detail, TESTS) == expected


def test_a_withheld_sample_keeps_its_verdict_and_flags_only() -> None:
    sample = {"id": 1, "verdict": "failed", "detail": "case 2 of 2 (input 'SECRET')", "stdout": "SECRET",
              "stderr": "SECRET", "exit_code": 3, "signal": None, "duration_ms": 12.5, "cpu_ms": 9.0,
              "failure": {"kind": "case", "index": 1, "input": "SECRET"}, "flags": ["ended_early"]}
    shown = withheld(sample, None)
    assert "SECRET" not in json.dumps(shown)
    assert shown["failure"] == {"kind": "case", "index": 1, "hidden": True} and shown["flags"] == ["ended_early"]
    assert shown["detail"].startswith("wrong answer at case 2; the tests are hidden")
    assert (shown["exit_code"], shown["duration_ms"], shown["hidden"]) == (None, None, True)
    passed = withheld({"verdict": "passed", "detail": None, "failure": None}, None)
    assert passed["failure"] is None and passed["detail"] is None


SECRET_DETAILS = {
    "failure": {"kind": "assertion", "line": 5, "source": "assert candidate(2) == 'SECRET-EXPECTED'",
                "expected": "'SECRET-EXPECTED'", "actual": "2"},
    "detail": "AssertionError: SECRET-EXPECTED",
    "stdout": "SECRET-ARG 2\n", "stderr": "Traceback ...\n    assert candidate(2) == 'SECRET-EXPECTED'\n",
    "exit_code": 1, "duration_ms": 41.0, "cpu_ms": 30.0,
}


async def _as_worker(db_session: AsyncSession, run_id: str) -> None:
    """Every sample of the run fails as a worker records it, with the secret in every detail."""
    await db_session.execute(
        text("UPDATE samples SET state = 'done', verdict = 'failed', attempts = 1, finished_at = now(), "
             "failure = CAST(:failure AS jsonb), detail = :detail, stdout = :stdout, stderr = :stderr, "
             "exit_code = :exit_code, duration_ms = :duration_ms, cpu_ms = :cpu_ms WHERE run_id = :run"),
        {**SECRET_DETAILS, "failure": json.dumps(SECRET_DETAILS["failure"]), "run": run_id},
    )
    await db_session.commit()


async def _samples(http: httpx.AsyncClient, run_id: str) -> dict[str, dict[str, Any]]:
    page = await http.get(f"/v1/runs/{run_id}/samples")
    assert page.status_code == 200, page.text
    return {sample["problem_id"]: sample for sample in page.json()["items"]}


async def test_hidden_tests_are_hidden_from_other_projects_only(app: FastAPI, db_session: AsyncSession) -> None:
    owner_key, other_key = await project_key(db_session, "bench-owner"), await project_key(db_session, "submitter")
    operator_key = await project_key(db_session, "operators", [*SCOPES, ADMIN])
    async with client_for(app, owner_key) as owner, client_for(app, other_key) as other, \
            client_for(app, operator_key) as operator:
        # One problem hides its tests, the other does not; the dataset is shared.
        body = {"name": "bench", "shared": True, "problems": [problem("hidden", test=TESTS, hidden_tests=True),
                                                              problem("open", test=TESTS)]}
        created = await owner.post("/v1/datasets", json=body)
        assert created.status_code == 201, created.text
        dataset = created.json()
        detail = (await other.get(f"/v1/datasets/{dataset['id']}")).json()
        assert "SECRET" not in json.dumps(detail)
        assert [(p["id"], p["hidden_tests"]) for p in detail["problems"]] == [("hidden", True), ("open", False)]
        theirs = await create_run(other, dataset["id"], {"hidden": 1, "open": 1})
        ours = await create_run(owner, dataset["id"], {"hidden": 1, "open": 1})
        for run in (theirs, ours):
            await _as_worker(db_session, run["id"])

        seen = await _samples(other, theirs["id"])
        assert "SECRET" not in json.dumps(seen["hidden"]), seen["hidden"]
        assert seen["hidden"]["hidden"] and seen["hidden"]["failure"] == {"kind": "assertion", "index": 1, "hidden": True}
        assert seen["hidden"]["detail"] == ("wrong answer at assertion 2; the tests are hidden: their inputs, expected "
                                            "outputs and text are shown to the dataset's project only")
        assert seen["open"]["failure"] == SECRET_DETAILS["failure"] and not seen["open"]["hidden"]
        # The owner, and an operator, see everything of every run they can read.
        assert (await _samples(owner, ours["id"]))["hidden"]["failure"] == SECRET_DETAILS["failure"]
        full = await _samples(operator, theirs["id"])
        assert full["hidden"]["stdout"] == SECRET_DETAILS["stdout"] and not full["hidden"]["hidden"]
        # The owner hides every problem's tests: the other problem's details go too; shows them again: back.
        assert (await owner.patch(f"/v1/datasets/{dataset['id']}", json={"hidden_tests": True})).status_code == 200
        assert "SECRET" not in json.dumps(await _samples(other, theirs["id"]))
        assert (await owner.patch(f"/v1/datasets/{dataset['id']}", json={"hidden_tests": False})).status_code == 200
        assert (await _samples(other, theirs["id"]))["open"]["stdout"] == SECRET_DETAILS["stdout"]
        # The dashboard's problem page leaves the hidden tests out for the other project.
        page = await other.get(f"/runs/{theirs['id']}/problems/hidden")
        assert page.status_code == 200 and "SECRET" not in page.text and '"tests_hidden": true' in page.text
        assert "SECRET-EXPECTED" in (await owner.get(f"/runs/{ours['id']}/problems/hidden")).text


async def test_hiding_tests_makes_another_dataset_and_leaves_other_digests_alone(client: httpx.AsyncClient) -> None:
    plain = {"name": "digest", "problems": [problem("a")]}
    first = (await client.post("/v1/datasets", json=plain)).json()
    again = await client.post("/v1/datasets", json={**plain, "problems": [{**problem("a"), "hidden_tests": False}]})
    assert again.status_code == 200 and again.json()["id"] == first["id"]
    hidden = await client.post("/v1/datasets", json={**plain, "hidden_tests": True})
    one_hidden = await client.post("/v1/datasets", json={**plain, "problems": [{**problem("a"), "hidden_tests": True}]})
    assert hidden.status_code == one_hidden.status_code == 201
    assert len({first["digest"], hidden.json()["digest"], one_hidden.json()["digest"]}) == 3
