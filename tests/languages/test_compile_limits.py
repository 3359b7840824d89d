"""Compile limits over the language's defaults: on a dataset and on a run (run over dataset over language),
validated, stored, returned, and enforced through the API, a worker and the C++ sandbox image."""

from __future__ import annotations

from tests.e2e.conftest import Stack, wait_for_run
from tests.languages.endtoend import STDIO_CASES
from tests.languages.test_cpp import STDIO_SOLUTION


def _counted(run: dict) -> dict[str, int]:
    return {verdict: count for verdict, count in run["progress"]["by_verdict"].items() if count}


def test_compile_limits_are_validated_returned_and_enforced(stack: Stack) -> None:
    client = stack.client(timeout=300)
    problems = [{"format": "stdio", "id": "sum", "cases": STDIO_CASES}]

    def refused(body: dict, text: str) -> None:
        response = client.post("/v1/datasets", json={"name": "bad", "problems": problems, **body})
        assert response.status_code == 422 and text in response.text, response.text

    refused({"language": "cpp", "compile_time_limit_s": 0}, "compile_time_limit_s")
    refused({"language": "cpp", "compile_memory_mb": -1}, "compile_memory_mb")
    # Above the language's defaults is for operators (PASSK_MAX_COMPILE_*): a submitter may only lower them.
    refused({"language": "cpp", "compile_time_limit_s": 40}, "at most 20 (cpp's default; an operator may allow more")
    refused({"language": "cpp", "compile_memory_mb": 2048}, "at most 1024 (cpp's default")
    refused({"language": "cpp", "compile_memory_mb": 8}, "at least 32")
    refused({"language": "python", "compile_time_limit_s": 5,
             "problems": [{"format": "stdio", "id": "p", "cases": STDIO_CASES}]}, "compiled languages only")

    # The dataset's override is stored and returned; a run's goes over it.
    dataset = client.post("/v1/datasets", json={
        "name": "compile-limits-cpp", "language": "cpp", "compile_time_limit_s": 15, "problems": problems,
    })
    assert dataset.status_code == 201, dataset.text
    assert dataset.json()["compile_time_limit_s"] == 15 and dataset.json()["compile_memory_mb"] is None
    dataset_id = dataset.json()["id"]
    bad_run = client.post("/v1/runs", json={"dataset_id": dataset_id, "model": "m", "sampling": {"temperature": 0.0},
                                            "compile_memory_mb": 99999,
                                            "samples": [{"problem_id": "sum", "completion": STDIO_SOLUTION}]})
    assert bad_run.status_code == 422 and "compile_memory_mb must be at most" in bad_run.text, bad_run.text

    # The default run first (runs are served oldest first): its compile is cached in the container, and the
    # tighter limit must not reuse it (the compile cache is keyed by the limits too).
    default = client.post("/v1/runs", json={
        "dataset_id": dataset_id, "model": "m", "sampling": {"temperature": 0.0},
        "samples": [{"problem_id": "sum", "completion": STDIO_SOLUTION}],
    }).raise_for_status().json()
    assert default["compile_time_limit_s"] == 15, default  # the dataset's, over the language's 20 s

    # <iostream> needs far more than 10 ms of compile CPU: the override makes it a compile_error.
    # (Through the Python client, which the CLI's `submit --compile-time-limit` uses.)
    with stack.passk_client() as passk:
        tight = passk.create_run(dataset_id, "m", {"temperature": 0.0},
                                 [{"problem_id": "sum", "completion": STDIO_SOLUTION}], compile_time_limit_s=0.01)
    assert tight["compile_time_limit_s"] == 0.01 and tight["compile_memory_mb"] == 1024, tight

    stack.start_worker(concurrency=1)
    tight_done = wait_for_run(client, tight["id"], timeout_s=600)
    default_done = wait_for_run(client, default["id"], timeout_s=600)
    stack.stop_workers()
    assert _counted(tight_done) == {"compile_error": 1}, tight_done["progress"]
    assert _counted(default_done) == {"passed": 1}, default_done["progress"]
    with stack.passk_client() as passk:
        (sample,) = list(passk.iter_samples(tight["id"]))
    assert "CPU time limit of 0.01 s" in sample["detail"], sample
