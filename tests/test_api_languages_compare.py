"""GET /v1/languages/compare: one model's runs in several languages, micro and macro averages with intervals."""

from __future__ import annotations

import secrets
from typing import Any

import httpx
import numpy as np
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from service.api.multilang.service import translation_key
from service.statistics.languages import language_intervals
from tests.test_api_compare import _bulk_verdicts

CASES = [{"input": "1\n", "output": "1\n"}]


async def language_run(
    client: httpx.AsyncClient, db_session: AsyncSession, language: str, passes: list[int], model: str = "m",
    n: int = 4, prefix: str | None = None,
) -> dict[str, Any]:
    """A dataset of len(passes) stdio problems in `language` (ids `<prefix>/<i>`, the language by default) and a
    run whose problem i has passes[i] of n passed."""
    keys = [f"{prefix or language}/{i}" for i in range(len(passes))]
    dataset = await client.post("/v1/datasets", json={
        "name": f"{language}-{secrets.token_hex(3)}", "language": language,
        "problems": [{"format": "stdio", "id": key, "cases": CASES} for key in keys],
    })
    assert dataset.status_code == 201, dataset.text
    run = await client.post("/v1/runs", json={
        "dataset_id": dataset.json()["id"], "model": model, "sampling": {"temperature": 0.8},
        "samples": [{"problem_id": key, "completion": f"// {key} {i}"} for key in keys for i in range(n)],
    })
    assert run.status_code == 202, run.text
    await _bulk_verdicts(db_session, run.json()["id"], {
        key: ["passed"] * c + ["failed"] * (n - c) for key, c in zip(keys, passes, strict=True)
    })
    return run.json()


async def test_per_language_micro_and_macro(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    cpp = await language_run(client, db_session, "cpp", [4] * 9 + [0] * 3)  # pass@1 = 0.75 over 12
    java = await language_run(client, db_session, "java", [2, 0, 0, 2])  # pass@1 = 0.25 over 4
    response = await client.get("/v1/languages/compare",
                                params={"runs": f"{java['id']},{cpp['id']}", "k": "1,4", "resamples": 1000})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["model"] == "m" and body["ks"] == [1, 4]
    rows = {row["language"]: row for row in body["languages"]}
    assert list(rows) == ["cpp", "java"] and rows["cpp"]["problems"] == 12 and rows["java"]["problems"] == 4
    assert rows["cpp"]["run_id"] == cpp["id"] and "toolchain" in rows["cpp"]
    assert rows["cpp"]["pass_at_k"][0]["pass_at_k"]["estimate"] == pytest.approx(0.75)
    assert rows["java"]["pass_at_k"][1]["pass_at_k"]["estimate"] == pytest.approx(0.5)  # pass@4: 2 of 4 problems
    micro, macro = body["micro"], body["macro"]
    assert micro["pass_at_k"][0]["pass_at_k"]["estimate"] == pytest.approx((9 + 0.5 + 0.5) / 16)
    assert macro["pass_at_k"][0]["pass_at_k"]["estimate"] == pytest.approx((0.75 + 0.25) / 2)
    assert "pooled" in micro["label"] and "unweighted" in macro["label"] and micro["problems"] == 16
    interval = micro["pass_at_k"][0]["pass_at_k"]
    assert interval["ci_low"] < interval["estimate"] < interval["ci_high"] and interval["label"]
    # cpp/0..3 and java/0..3 are one problem each in two languages: resampled together, and said so.
    pairing = body["pairing"]
    assert pairing["joint"] and pairing["paired"] == ["0", "1", "2", "3"] and pairing["units"] == 12
    assert pairing["unmatched"] == {"cpp": [f"cpp/{i}" for i in range(4, 12)]}
    assert any("8 of the cpp problems" in w and "match no problem of another language" in w for w in body["warnings"])
    assert any(w.startswith("fewer than 30 problems in cpp, java") for w in body["warnings"])
    # The same numbers as the pure function with the same seed and pairing.
    expected = language_intervals(
        {"cpp": np.array([[1.0, 1.0]] * 9 + [[0.0, 0.0]] * 3),
         "java": np.array([[0.5, 1.0], [0.0, 0.0], [0.0, 0.0], [0.5, 1.0]])},
        resamples=1000, confidence=0.95, seed=0, method="bca",
        keys_by_language={"cpp": [str(i) for i in range(12)], "java": [str(i) for i in range(4)]},
    )
    assert interval["ci_low"] == pytest.approx(expected.micro[0].ci_low)
    assert macro["pass_at_k"][1]["pass_at_k"]["ci_high"] == pytest.approx(expected.macro[1].ci_high)


async def test_languages_that_share_no_problem_are_independent_and_warned(
    client: httpx.AsyncClient, db_session: AsyncSession
) -> None:
    cpp = await language_run(client, db_session, "cpp", [4, 0, 2], prefix="alpha")
    go = await language_run(client, db_session, "go", [1, 3], prefix="beta")
    body = (await client.get("/v1/languages/compare", params={"runs": f"{cpp['id']},{go['id']}"})).json()
    assert body["pairing"]["joint"] is False and body["pairing"]["paired"] == [] and body["pairing"]["units"] == 5
    assert any("no problem id matches across the languages" in w for w in body["warnings"])


def test_translation_keys() -> None:
    # HumanEval-X, HumanEval and MultiPL-E name one problem alike after the language prefix
    for problem_id in ("CPP/0", "Go/0", "Rust/0", "JavaScript/0", "Python/0", "HumanEval/0",
                       "HumanEval_0_has_close_elements"):
        assert translation_key(problem_id) == "HumanEval/0", problem_id
    assert translation_key("mbpp_2_similar_elements") == "MBPP/2"
    assert translation_key("cpp/two_sum") == translation_key("go/two_sum") == "two_sum"
    assert translation_key("js/two_sum") == "two_sum"  # a language's alias
    # anything else is its own id
    assert translation_key("two_sum") == "two_sum" and translation_key("misc/7") == "misc/7"


async def test_refusals(client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    cpp = await language_run(client, db_session, "cpp", [1, 2])
    cpp_again = await language_run(client, db_session, "cpp", [3, 2])
    other_model = await language_run(client, db_session, "go", [1, 2], model="other")
    two_cpp = await client.get("/v1/languages/compare", params={"runs": f"{cpp['id']},{cpp_again['id']}"})
    assert two_cpp.status_code == 422 and "both in cpp" in two_cpp.text and "one run per language" in two_cpp.text
    models = await client.get("/v1/languages/compare", params={"runs": f"{cpp['id']},{other_model['id']}"})
    assert models.status_code == 422 and "one model's runs" in models.text and "other" in models.text
    bad = await client.get("/v1/languages/compare", params={"runs": "nope"})
    assert bad.status_code == 422 and "not a run id" in bad.text
    k = await client.get("/v1/languages/compare", params={"runs": cpp["id"], "k": "9"})
    assert k.status_code == 422 and "exceeds the smallest n" in k.text
    missing = await client.get("/v1/languages/compare", params={"runs": "0b7e8a9c-1d2e-4f30-8a1b-2c3d4e5f6a7b"})
    assert missing.status_code == 404
