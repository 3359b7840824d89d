"""The original harness, run in a language's own sandbox image: its commands for each program (the language's
`reference_commands`, in a directory holding `source_file`), its timeouts, and its pass rule (`reference_pass`).
The differential tests (tests/languages/reference.py) and bench/languages.py compare passk's verdicts with it."""

from __future__ import annotations

import io
import json
import tarfile
from typing import Any

from sandbox.languages.base import Language

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
                try:
                    out, err = process.communicate(timeout=30)
                except subprocess.TimeoutExpired:  # a process outside the group still holds the pipes
                    process.kill()
                    out, err = b"", b"passk: the output stayed open after the process group was killed"
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
                  workers: int = 2, env: dict[str, str] | None = None, timeout_s: float | None = None,
                  build_timeout_s: float | None = None) -> dict[str, dict[str, Any]]:
    """label -> {passed, exit_code, timed_out, stdout, stderr} of each program under the original harness, all in
    one container, `workers` at a time. The run's timeout is the harness's (`reference_pass.timeout_s`) unless
    `timeout_s` is given (a bench's time limit, the same as passk's); the build's, the harness's unless given."""
    rule = language.reference_pass
    job = {"programs": programs, "commands": list(language.reference_commands), "source_file": language.source_file,
           "timeout": timeout_s or rule.timeout_s,
           "build_timeout": build_timeout_s or rule.build_timeout_s or rule.timeout_s,
           "workers": workers, "env": {**dict(rule.env), **(env or {})}}
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
        status = container.wait(timeout=1200)
        logs = container.logs(stdout=True, stderr=False)
        assert status["StatusCode"] == 0, container.logs(stdout=False, stderr=True)[-3000:]
    finally:
        container.remove(force=True)
    results = json.loads(logs)
    for result in results.values():
        result["passed"] = rule.passes(result["exit_code"], result["stdout"], result["stderr"], result["timed_out"])
    return results


# Exit statuses of a program the kernel killed with SIGKILL: through `sh -c` (128 + 9), or directly.
_KILLED = (137, -9)


def rerun_alone(docker_client: Any, image: str, language: Language, programs: dict[str, str],
                results: dict[str, dict[str, Any]], passed: set[str], **options: Any) -> int:
    """What the harness's container did to a program rather than the program itself, on a loaded machine: its own
    timeouts (a start-up or a compile that did not get the CPU in time), and SIGKILLs from the container's memory
    limit, which all the programs running together share, so that a neighbour's allocation can end a correct
    program. Those of the programs passk passed (`passed`, labels) run again, one at a time, before they count, as
    passk re-runs its own wall-clock timeouts alone. Updates `results` in place; returns how many ran again.
    `options`: run_reference's (env, timeout_s, build_timeout_s)."""
    again = {label: programs[label] for label, result in results.items()
             if (result["timed_out"] or result["exit_code"] in _KILLED) and label in passed}
    if again:
        results.update(run_reference(docker_client, image, language, again, workers=1, **options))
    return len(again)
