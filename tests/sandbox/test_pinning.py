"""A worker thread's sandbox runs its programs on a core of its own (Frame.core, Settings.sandbox_pinning)."""

from __future__ import annotations

import os
import re

import docker

from sandbox.executor import Job, Sandbox, SandboxSettings
from sandbox.verdicts import Verdict
from service.formats.harness import trusted_tests_program
from service.worker.runner import sandbox_cores
from tests.sandbox.programs import MIB

# The tests print the judge's cores, the candidate its own, each as a sorted list.
PROGRAM = trusted_tests_program(
    "import os\nprint('candidate', sorted(os.sched_getaffinity(0)), flush=True)\ndef f(x):\n    return 2 * x\n",
    "def f(x):\n    pass\n",
    "import os\nprint('judge', sorted(os.sched_getaffinity(0)), flush=True)\n"
    "def check(candidate):\n    assert candidate(2) == 4\n\ncheck(f)\n",
    "f",
)


def cores_seen(box: Sandbox, pinned: bool = True) -> dict[str, str]:
    jobs = [Job(str(n), PROGRAM.text, 3.0, 256 * MIB, judged=True) for n in range(2)]
    outcome = box.run(jobs, pinned)[1]  # the second on the kept judge
    assert outcome.verdict is Verdict.PASSED, outcome
    return dict(re.findall(r"(judge|candidate) (\[[\d, ]*\])", outcome.stdout or ""))


def test_threads_take_the_cores_in_turn() -> None:
    assert sandbox_cores(5, [0, 2, 3]) == [0, 2, 3, 0, 2]
    assert sandbox_cores(2, []) == [None, None]


def test_a_pinned_sandbox_runs_the_judge_and_the_candidate_on_its_core(docker_client: docker.DockerClient,
                                                                       sandbox_image: str) -> None:
    usable = sorted(os.sched_getaffinity(0))
    core = usable[-1]
    box = Sandbox(docker_client, SandboxSettings(image=sandbox_image, owner="passk-tests", core=core))
    everywhere = str(usable)
    try:
        assert cores_seen(box) == {"judge": f"[{core}]", "candidate": f"[{core}]"}
        # An interactive run's frame asks for no core: the same container runs it on every core, then pinned again.
        assert cores_seen(box, pinned=False) == {"judge": everywhere, "candidate": everywhere}
        assert cores_seen(box) == {"judge": f"[{core}]", "candidate": f"[{core}]"}
    finally:
        box.close()


def test_unpinned_or_on_a_core_it_may_not_use_a_sandbox_runs_anywhere(docker_client: docker.DockerClient,
                                                                      sandbox_image: str) -> None:
    everywhere = str(sorted(os.sched_getaffinity(0)))
    for core in (None, 4096):
        box = Sandbox(docker_client, SandboxSettings(image=sandbox_image, owner="passk-tests", core=core))
        try:
            assert cores_seen(box) == {"judge": everywhere, "candidate": everywhere}
        finally:
            box.close()
