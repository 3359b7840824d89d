"""Adding a format is one module: a throwaway format, registered the way a module in service/formats is, appears
in the API's schema, in the union a dataset's problems are validated with, in the database, and becomes a
program, with nothing else edited. It runs in a fresh interpreter, so the registry of every other test stays as
it is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = '''
import asyncio, json, sys, types, typing
from typing import Literal

import httpx
from sqlalchemy import text

from service.formats import registry
from service.formats.humaneval import program as humaneval_program
from service.formats.fields import ProblemFields
from service.formats.registry import Format, columns_with_test_code


class ThrowawayProblemIn(ProblemFields):
    format: Literal["throwaway"]
    id: str
    prompt: str
    test: str
    entry_point: str


module = types.ModuleType("service.formats.throwaway")
module.FORMAT = Format(
    name="throwaway", program=humaneval_program, model=ThrowawayProblemIn,
    columns=lambda problem: columns_with_test_code("throwaway", problem.prompt, problem.test, None,
                                                   entry_point=problem.entry_point),
)
sys.modules[module.__name__] = module
registry.MODULES = (*registry.MODULES, "throwaway")

from service.api.app import create_app
from service.api.auth.keys import SCOPES
from service.api.datasets import schemas
from service.cli.keys import create_key
from service.core.database import make_async_engine
from service.core.settings import Settings

settings = Settings(env="test", database_url=sys.argv[1])
app = create_app(settings)
found = {"union": ThrowawayProblemIn in typing.get_args(schemas.AnyProblemIn),
         "schema": "ThrowawayProblemIn" in app.openapi()["components"]["schemas"]}
key = create_key(settings, "throwaway format", list(SCOPES))
problem = {"format": "throwaway", "id": "t/0", "prompt": "def same(x):\\n", "entry_point": "same",
           "test": "def check(candidate):\\n    assert candidate(1) == 1\\n"}


async def main() -> None:
    async with app.router.lifespan_context(app), httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test", headers={"Authorization": f"Bearer {key}"}
    ) as client:
        created = await client.post("/v1/datasets", json={"name": "throwaway-format", "problems": [problem]})
        found["status"] = created.status_code
        wrong = await client.post("/v1/datasets", json={"name": "x", "problems": [{**problem, "format": "nope"}]})
        found["unknown"] = [wrong.status_code, wrong.json()["detail"][0]["msg"]]
    engine = make_async_engine(settings.database_url)
    async with engine.connect() as connection:
        row = (await connection.execute(text(
            "SELECT format, prompt, test, entry_point FROM problems WHERE dataset_id = :id"), {"id": created.json()["id"]}
        )).one()
    await engine.dispose()
    found["stored"] = row.format
    found["judged"] = registry.program_for(row, "    return x\\n").judged


asyncio.run(main())
print(json.dumps(found))
'''


def test_a_registered_format_is_in_the_schema_the_union_and_the_database(database_url: str) -> None:
    done = subprocess.run([sys.executable, "-c", _SCRIPT, database_url], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["union"] and found["schema"]
    assert found["status"] == 201
    assert found["stored"] == "throwaway"
    assert found["judged"] is True
    status, message = found["unknown"]
    assert status == 422 and "'throwaway'" in message and "'humaneval'" in message
