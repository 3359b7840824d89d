"""One end-to-end check for a language, shared by every language's test: datasets created
through the API (HumanEval-X rows, MultiPL-E rows imported with the CLI, stdio problems), one run per dataset
pushed through a worker and the language's sandbox image, and each sample's verdict compared with the expected."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from service.api.runcode.service import names as run_code_names
from service.core.settings import Settings
from service.formats.loader import to_problem
from tests.e2e.conftest import Stack, wait_for_run
from tests.languages.conftest import DATA, exceptions, humaneval_x_rows


# The expected verdict of a canonical solution listed as failing under the original harness too, and of one
# listed as nondeterministic there.
NOT_PASSED = "not passed"
ANY_VERDICT = "any verdict"
STDIO_CASES = [{"input": "1 2\n", "output": "3\n"}, {"input": "40 2\n5 5\n", "output": "42\n10\n"}]


@dataclass
class Case:
    """Samples of one dataset, each with the verdict passk must give it (None: the canonical rule)."""

    dataset: dict[str, Any] | None = None  # POST /v1/datasets body (None: imported from `multipl_e_file`)
    multipl_e_file: Path | None = None
    samples: list[tuple[str, str, str, str]] = field(default_factory=list)  # (label, problem_id, completion, verdict)


def check_language(stack: Stack, language: str, cases: dict[str, Case], timeout_s: float = 2400) -> dict[str, dict]:
    """Creates the datasets, starts one run per dataset, waits, and asserts every verdict; returns the
    results by label (for further checks of their details)."""
    client = stack.client(timeout=300)
    env = {**os.environ, "PASSK_URL": stack.api_url, "PASSK_API_KEY": stack.api_key}
    dataset_ids = {}
    for name, case in cases.items():
        if case.dataset is not None:
            created = client.post("/v1/datasets", json={"name": name, **case.dataset})
            assert created.status_code == 201, created.text
            assert created.json()["language"] == language
            dataset_ids[name] = created.json()["id"]
        else:
            imported = subprocess.run(
                [sys.executable, "-m", "service.cli", "datasets", "import", "multipl-e", str(case.multipl_e_file),
                 "--name", name], env=env, capture_output=True, text=True, timeout=120,
            )
            assert imported.returncode == 0, imported.stderr
            assert case.multipl_e_file is not None
            rows = sum(1 for line in case.multipl_e_file.read_text().splitlines() if line.strip())
            assert f"{rows} multipl-e" in imported.stdout and f"language {language}" in imported.stdout, imported.stdout
    datasets = {d["name"]: d for d in client.get("/v1/datasets").json()["items"]}
    for name in cases:
        dataset_ids.setdefault(name, datasets[name]["id"])
        assert datasets[name]["language"] == language

    stack.start_worker(concurrency=2)
    run_ids = {}
    for name, case in cases.items():
        run_ids[name] = client.post("/v1/runs", json={
            "dataset_id": dataset_ids[name], "model": f"{language}-{name}", "sampling": {"temperature": 0.0},
            "samples": [{"problem_id": problem, "completion": completion} for _, problem, completion, _ in case.samples],
        }).raise_for_status().json()["id"]
    runs = {name: wait_for_run(client, run_id, timeout_s=timeout_s) for name, run_id in run_ids.items()}
    stack.stop_workers()

    results: dict[str, dict] = {}
    wrong = []
    with stack.passk_client() as passk:
        for name, case in cases.items():
            assert runs[name]["status"] == "completed", runs[name]
            assert runs[name]["progress"]["by_verdict"].get("sandbox_error", 0) == 0, runs[name]["progress"]
            got = list(passk.iter_samples(run_ids[name]))
            for (label, problem, _, verdict), mine in zip(case.samples, got, strict=True):
                results[label] = mine
                if mine["verdict"] != verdict and verdict != ANY_VERDICT and not (
                    verdict == NOT_PASSED and mine["verdict"] != "passed"
                ):
                    wrong.append((name, label, problem, verdict, mine["verdict"], (mine["detail"] or "")[:400],
                                  (mine.get("stderr") or "")[:300]))
    assert not wrong, wrong
    return results


def broken_variants(*, wrong: str, runtime: str, loop: str, memory: str, compile_error: str | None = None,
                    runtime_label: str = "runtime exception") -> dict[str, tuple[str | AfterCanonical, str]]:
    """The broken completions every language is judged on, each with its verdict: a wrong answer, a compile
    error (compiled languages), a runtime error, an infinite loop and a memory hog."""
    variants: dict[str, tuple[str | AfterCanonical, str]] = {"wrong answer": (wrong, "failed")}
    if compile_error is not None:
        variants["compile error"] = (compile_error, "compile_error")
    variants[runtime_label] = (runtime, "error")
    variants["infinite loop"] = (loop, "timeout")
    variants["memory hog"] = (memory, "memory")
    return variants


@dataclass(frozen=True)
class AfterCanonical:
    """A variant's completion: the first problem's canonical solution followed by `code`."""

    code: str


def humaneval_x_case(file_language: str, language: str, variants: dict[str, tuple[str | AfterCanonical, str]],
                     time_limit_s: float, memory_mb: int = 256) -> Case:
    """The 164 canonical solutions, then broken variants of the first problem. A canonical solution listed in
    tests/data/humaneval_x_exceptions.json must not pass, or may get any verdict where its reason says it is
    nondeterministic under the original harness too."""
    rows = humaneval_x_rows(file_language)
    assert len(rows) == 164
    listed = exceptions(language)

    def canonical_verdict(task_id: str) -> str:
        if task_id not in listed:
            return "passed"
        return ANY_VERDICT if listed[task_id].startswith("nondeterministic") else NOT_PASSED

    samples = [(row["task_id"], row["task_id"], row["canonical_solution"], canonical_verdict(row["task_id"]))
               for row in rows]
    first = rows[0]
    for label, (completion, verdict) in variants.items():
        if isinstance(completion, AfterCanonical):
            completion = first["canonical_solution"] + completion.code
        samples.append((label, first["task_id"], completion, verdict))
    return Case(
        dataset={"language": language, "time_limit_s": time_limit_s, "memory_mb": memory_mb,
                 "problems": [to_problem(row) for row in rows]},
        samples=samples,
    )


def multipl_e_case(file_language: str, completions: dict[str, dict[str, tuple[str, str]]]) -> Case:
    """MultiPL-E rows imported with the CLI from tests/data/multipl-e/; completions: problem name -> label ->
    (completion, verdict)."""
    return Case(
        multipl_e_file=DATA / "multipl-e" / f"{file_language}.jsonl",
        samples=[(label, name, completion, verdict) for name, entries in completions.items()
                 for label, (completion, verdict) in entries.items()],
    )


def stdio_case(language: str, right: str, *, wrong: str | None = None, compile_error: str | None = None,
               more: tuple[tuple[str, str, str], ...] = (), time_limit_s: float = 3.0) -> Case:
    """The `sum` stdio problem (a + b per line, two cases): a right program (label "stdio"), optionally a wrong
    one ("stdio wrong") and one that does not compile ("stdio compile error"), then `more` (label, program,
    verdict)."""
    samples = [("stdio", right, "passed")]
    if wrong is not None:
        samples.append(("stdio wrong", wrong, "failed"))
    if compile_error is not None:
        samples.append(("stdio compile error", compile_error, "compile_error"))
    return Case(
        dataset={"language": language, "time_limit_s": time_limit_s, "problems": [
            {"format": "stdio", "id": "sum", "cases": STDIO_CASES}]},
        samples=[(label, "sum", program, verdict) for label, program, verdict in [*samples, *more]],
    )


def case_results(results: dict[str, dict], case: Case) -> list[dict]:
    """The results of one case's samples, in order."""
    return [results[label] for label, *_ in case.samples]


def assert_toolchain(stack: Stack, language: str, dataset_name: str, prefix: str) -> dict[str, Any]:
    """The toolchain is reported per language and on the dataset; returns the language's entry."""
    client = stack.client(timeout=60)
    languages = {entry["name"]: entry for entry in client.get("/v1/languages").raise_for_status().json()}
    assert languages[language]["toolchain"].startswith(prefix), languages[language]
    dataset = next(d for d in client.get("/v1/datasets").raise_for_status().json()["items"] if d["name"] == dataset_name)
    detail = client.get(f"/v1/datasets/{dataset['id']}").raise_for_status().json()
    assert detail["language"] == language and detail["toolchain"] == languages[language]["toolchain"]
    return languages[language]


def check_run_code(stack: Stack, name: str, *, prints: str, raises: str, loops: str, broken: str, echoes: str,
                   compile_timeout: float = 10, more: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """POST /run_code under the language's SandboxFusion name, through a worker and the real sandbox, answered as
    SandboxFusion answers: `prints` prints 123 (Success, Finished, 0), `raises` ends with an error (Failed,
    Finished, non-zero), `loops` runs past its timeout (Failed, TimeLimitExceeded), `broken` does not compile or
    parse (Failed: in a compiled language with a failed compile_result and no run_result, else a non-zero exit),
    and `echoes` prints the line it reads from stdin (65535). `more` are further programs (label: code) sent
    alongside; every answer is returned, by label, for the language's own checks."""
    programs = {"prints": {"code": prints}, "raises": {"code": raises}, "loops": {"code": loops, "run_timeout": 1},
                "broken": {"code": broken}, "echoes": {"code": echoes, "stdin": "65535\n"},
                **{label: {"code": code} for label, code in (more or {}).items()}}
    client = stack.client(timeout=300)
    stack.start_worker(concurrency=2)
    try:
        def post(body: dict[str, Any]) -> dict[str, Any]:
            body = {"language": name, "run_timeout": 10, "compile_timeout": compile_timeout, **body}
            for _ in range(3):  # a busy machine answers 504, which SandboxFusion's clients retry
                response = client.post("/run_code", json=body)
                if response.status_code != 504:
                    break
            assert response.status_code == 200, response.text
            return response.json()

        with ThreadPoolExecutor(len(programs)) as pool:
            answers = dict(zip(programs, pool.map(post, programs.values()), strict=True))
    finally:
        stack.stop_workers()
    expected = {"prints": ("Success", "Finished"), "raises": ("Failed", "Finished"),
                "loops": ("Failed", "TimeLimitExceeded"), "echoes": ("Success", "Finished")}
    wrong = {label: answers[label] for label, want in expected.items()
             if (answers[label]["status"], (answers[label]["run_result"] or {}).get("status")) != want}
    assert not wrong, wrong
    assert answers["prints"]["run_result"]["return_code"] == 0 and answers["prints"]["run_result"]["stdout"] == "123\n"
    assert answers["raises"]["run_result"]["return_code"] != 0
    assert answers["echoes"]["run_result"]["stdout"] == "65535\n"
    broken_ = answers["broken"]
    assert broken_["status"] == "Failed", broken_
    if run_code_names(Settings())[name].compiled:
        assert broken_["run_result"] is None and broken_["compile_result"]["return_code"] != 0, broken_
    else:
        assert broken_["run_result"]["return_code"] != 0, broken_
    return answers
