"""The original harness, run in a language's own sandbox image: MultiPL-E's command for each program (the
language's `reference_commands`, in a directory holding `source_file`), its timeout, and its pass rule
(`reference_pass`), for the differential tests that compare passk's verdicts with it."""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sandbox.executor import Outcome
from sandbox.images import ensure_language_image, toolchain_version
from sandbox.languages import get
from sandbox.languages.base import Language
from sandbox.verdicts import Verdict
from tests.languages.conftest import multipl_e_rows
from tests.languages.hostile import job
from tests.languages.test_javascript_hostile import run_parallel

# Runs in the container (python3 is the supervisor's): each program in a directory of its own, each command with
# the harness's timeout (the whole process group killed then), outputs kept as the harness keeps them.
RUNNER = r"""
import json, os, signal, subprocess, sys, tempfile
from concurrent.futures import ThreadPoolExecutor
job = json.load(open(sys.argv[1]))

def one(item):
    label, text = item
    with tempfile.TemporaryDirectory() as where:
        with open(os.path.join(where, job["source_file"]), "w") as handle:
            handle.write(text)
        for index, command in enumerate(job["commands"]):
            timeout = job["build_timeout"] if index < len(job["commands"]) - 1 else job["timeout"]
            process = subprocess.Popen(["sh", "-c", command], cwd=where, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                       env={"PATH": "/usr/bin:/bin", "HOME": where, "LANG": "C.UTF-8", **job["env"]})
            try:
                out, err = process.communicate(timeout=timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                out, err = process.communicate()
                timed_out = True
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            result = {"exit_code": -1 if timed_out else process.returncode, "timed_out": timed_out,
                      "stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace")}
            if timed_out or process.returncode != 0:
                break
        return label, result

with ThreadPoolExecutor(job["workers"]) as pool:
    print(json.dumps(dict(pool.map(one, job["programs"].items()))))
"""


def run_reference(docker_client: Any, image: str, language: Language, programs: dict[str, str],
                  workers: int = 2, env: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """label -> {passed, exit_code, timed_out, stdout, stderr} of each program under the original harness."""
    job = {"programs": programs, "commands": list(language.reference_commands), "source_file": language.source_file,
           "timeout": language.reference_pass.timeout_s,
           "build_timeout": language.reference_pass.build_timeout_s or language.reference_pass.timeout_s,
           "workers": workers, "env": env or {}}
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        for name, data in (("reference.py", RUNNER.encode()), ("job.json", json.dumps(job).encode())):
            info = tarfile.TarInfo(f"passk-reference/{name}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    container = docker_client.containers.create(
        image, ["python3", "/tmp/passk-reference/reference.py", "/tmp/passk-reference/job.json"], entrypoint=[],
        user="10001:10001", network_mode="none", mem_limit="1g", pids_limit=512, working_dir="/tmp",
    )
    try:
        container.put_archive("/tmp", archive.getvalue())
        container.start()
        status = container.wait(timeout=3600)
        logs = container.logs(stdout=True, stderr=False)
        assert status["StatusCode"] == 0, container.logs(stdout=False, stderr=True)[-3000:]
    finally:
        container.remove(force=True)
    results = json.loads(logs)
    for result in results.values():
        result["passed"] = language.reference_pass.passes(result["exit_code"], result["stdout"], result["stderr"],
                                                          result["timed_out"])
    return results


@dataclass
class Comparison:
    outcomes: dict[str, Outcome]  # passk's, by label
    reference: dict[str, dict]  # the original harness's, by label ({"passed", "exit_code", ...})
    differ: set[str]  # the labels on which they disagree about a pass


def compare_with_multipl_e(docker_client: Any, name: str, rows_code: str, chosen: dict[str, tuple[str, str]],
                           differences: Iterable[str], env: dict[str, str] | None = None) -> Comparison:
    """Each chosen program (label -> (problem, completion)) through passk's sandbox and through MultiPL-E's own
    command in the same image (with `env` added to its environment): no sandbox error, and they disagree on exactly
    the listed `differences`."""
    language = get(name)
    image = ensure_language_image(docker_client, language)
    version = toolchain_version(docker_client, image, language)
    rows = {row["name"]: row for row in multipl_e_rows(rows_code)}
    texts = {label: rows[problem]["prompt"] + completion + "\n" + rows[problem]["tests"]
             for label, (problem, completion) in chosen.items()}
    reference = run_reference(docker_client, image, language, texts, env=env)
    jobs = [job(language, version, rows[problem], completion, label) for label, (problem, completion) in chosen.items()]
    outcomes = {j.id: o for j, o in zip(jobs, run_parallel(docker_client, image, jobs), strict=True)}
    assert not [label for label, o in outcomes.items() if o.verdict is Verdict.SANDBOX_ERROR]
    # The harness's own timeouts under a loaded machine (a compile inside its 15 s): those of programs passk passed
    # run again, one at a time, before they count, as passk re-runs its own wall-clock timeouts alone.
    again = {label: texts[label] for label, result in reference.items()
             if result["timed_out"] and outcomes[label].verdict is Verdict.PASSED}
    if again:
        reference.update(run_reference(docker_client, image, language, again, workers=1, env=env))
    differ = {label for label in chosen if (outcomes[label].verdict is Verdict.PASSED) != reference[label]["passed"]}
    listed = set(differences)
    assert differ == listed, {label: (outcomes[label].verdict.value, reference[label]["exit_code"])
                              for label in differ ^ listed}
    return Comparison(outcomes, reference, differ)
