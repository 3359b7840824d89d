"""A judge kept for one problem's samples within a frame (sandbox/runtime/live_judge.py), in the real image.

Each sample's tests print the judge's pid (and what else a test needs to see) on the judge's stdout, which is
that sample's stdout: which judge ran which sample is read from the results, never from the runtime's insides.
"""

from __future__ import annotations

import json
import re
import textwrap

from sandbox.executor import Outcome, Sandbox
from sandbox.runtime import job, live_judge
from sandbox.verdicts import Verdict
from service.formats.harness import trusted_tests_program
from service.formats.program import Program
from tests.sandbox.programs import run_programs

PROMPT = "def f(x):\n    \"\"\"x doubled\"\"\"\n"
DOUBLES = "def f(x):\n    return 2 * x\n"


def program_with_tests(candidate: str, tests_body: str = "", check: str = "assert candidate(2) == 4") -> Program:
    """A HumanEval-shaped program whose tests first print `judge <pid>` (and run `tests_body`) in the judge."""
    tests = "import os\nprint('judge', os.getpid(), flush=True)\n" + textwrap.dedent(tests_body)
    tests += f"\ndef check(candidate):\n    {check}\n\ncheck(f)\n"
    return trusted_tests_program(candidate, PROMPT, tests, "f")


def judges(outcomes: list[Outcome]) -> list[int]:
    return [int(re.search(r"judge (\d+)", outcome.stdout or "").group(1)) for outcome in outcomes]


def test_the_program_splits_into_the_problems_side_and_the_candidates_source() -> None:
    first, second = program_with_tests(DOUBLES), program_with_tests("def f(x):\n    return x + x\n")
    problem, source = job.tests_parts(first.text)
    assert source == DOUBLES and "candidate" not in json.loads(problem)
    assert job.tests_parts(second.text)[0] == problem
    assert job.tests_parts("print('not a judge call')\n") is None
    assert job.tests_parts("_passk_tests_main('not json')\n") is None


def test_a_problems_samples_share_one_judge_each_with_a_candidate_of_its_own(sandbox: Sandbox) -> None:
    candidate = "import os\nprint('candidate', os.getpid(), flush=True)\n" + DOUBLES
    outcomes = run_programs(sandbox, [program_with_tests(candidate + f"# {n}\n") for n in range(5)])
    assert [outcome.verdict for outcome in outcomes] == [Verdict.PASSED] * 5, outcomes
    assert len(set(judges(outcomes))) == 1
    candidates = [re.findall(r"candidate (\d+)", outcome.stdout or "") for outcome in outcomes]
    assert all(len(found) == 1 for found in candidates) and len({found[0] for found in candidates}) == 5
    # Each sample's output is its own: one judge line, one candidate line.
    assert all((outcome.stdout or "").count("judge") == 1 for outcome in outcomes)


def test_the_judge_is_new_after_a_sample_that_did_not_end_the_ordinary_way(sandbox: Sandbox) -> None:
    samples = [
        DOUBLES,
        "def f(x):\n    while True:\n        pass\n",  # timeout
        DOUBLES,
        "import os, signal\ndef f(x):\n    os.kill(os.getpid(), signal.SIGSEGV)\n",  # crashed
        "def f(x):\n    return 3\n",  # failed: the judge stays
        "def f(x):\n    raise ValueError('no')\n",  # error: the judge stays
        "import sys\nsys.exit(0)\n",  # failed, flagged ended_early
        DOUBLES,
    ]
    outcomes = run_programs(sandbox, [program_with_tests(source) for source in samples], time_limit_s=1.0)
    assert [outcome.verdict for outcome in outcomes] == [
        Verdict.PASSED, Verdict.TIMEOUT, Verdict.PASSED, Verdict.CRASHED, Verdict.FAILED, Verdict.ERROR,
        Verdict.FAILED, Verdict.PASSED,
    ], outcomes
    assert "ended_early" in outcomes[6].flags
    # A timeout's output may stop anywhere, and a candidate that exits at once ends its tests before they start.
    first, third, crashed, failed, errored, last = judges([outcomes[i] for i in (0, 2, 3, 4, 5, 7)])
    assert first != third  # after the timeout
    assert third == crashed  # the crash was the candidate's: the judge that relayed it is not kept after it
    assert failed != crashed and failed == errored
    assert last != errored  # the flagged sample ran on it, and it was not kept after that


def test_each_sample_gets_the_cpu_limit_a_new_judge_would(sandbox: Sandbox) -> None:
    """RLIMIT_CPU counts a process's whole life: a kept judge's limit moves per sample."""
    burn = "import time\n_t = time.process_time()\nwhile time.process_time() - _t < {s}:\n    pass\n"
    programs = [program_with_tests(DOUBLES + f"# {n}\n", burn.format(s=0.6)) for n in range(3)]
    programs.append(program_with_tests(DOUBLES, burn.format(s=5)))
    outcomes = run_programs(sandbox, programs, time_limit_s=1.0)
    assert [outcome.verdict for outcome in outcomes] == [Verdict.PASSED] * 3 + [Verdict.TIMEOUT], outcomes
    assert len(set(judges(outcomes[:3]))) == 1


def test_a_judge_that_grew_is_replaced(sandbox: Sandbox) -> None:
    """Tests (trusted code) that leave state in a module keep it in a kept judge; once the judge holds more than
    live_judge.GROWTH_BYTES beyond a new judge, the next sample gets a new judge."""
    hoard = "import sys\nsys.__dict__.setdefault('_hoard', []).append(b'x' * {size})\nprint('hoard', len(sys._hoard))\n"
    small = [program_with_tests(DOUBLES + f"# {n}\n", hoard.format(size=1024)) for n in range(3)]
    large = [program_with_tests(DOUBLES + f"# {n}\n", hoard.format(size=2 * live_judge.GROWTH_BYTES)) for n in range(3)]
    kept = run_programs(sandbox, small)
    replaced = run_programs(sandbox, large)
    assert all(outcome.verdict is Verdict.PASSED for outcome in kept + replaced), kept + replaced
    assert [re.search(r"hoard (\d+)", o.stdout or "").group(1) for o in kept] == ["1", "2", "3"]
    assert [re.search(r"hoard (\d+)", o.stdout or "").group(1) for o in replaced] == ["1", "1", "1"]
    assert len(set(judges(replaced))) == 3


def test_what_a_sample_leaves_behind_ends_its_judge_and_the_next_sample_starts_clean(sandbox: Sandbox) -> None:
    leaves = "open('/dev/shm/left', 'w').write('x')\n" + DOUBLES  # a file that outlives the process
    sees = "import os\ndef f(x):\n    return -1 if os.path.exists('/dev/shm/left') else 2 * x\n"
    outcomes = run_programs(sandbox, [program_with_tests(DOUBLES), program_with_tests(leaves), program_with_tests(sees)])
    assert [outcome.verdict for outcome in outcomes] == [Verdict.PASSED] * 3, outcomes
    first, leaving, after = judges(outcomes)
    assert first == leaving != after


def test_tests_that_do_not_compile_fail_every_sample_as_before(sandbox: Sandbox) -> None:
    broken = trusted_tests_program(DOUBLES, PROMPT, "def check(candidate):\n    assert candidate(2) ==\n", "f")
    outcomes = run_programs(sandbox, [broken] * 8 + [program_with_tests(DOUBLES)])
    assert [outcome.verdict for outcome in outcomes] == [Verdict.ERROR] * 8 + [Verdict.PASSED], outcomes
    # The judge that could not compile the tests stays for the next sample and tells it the same. One that left
    # after its answer would take along the sample PID 1 sent it next, report and all (that sample would read
    # "exited with status 1", about one time in six).
    assert "SyntaxError" in (outcomes[0].detail or ""), outcomes
    assert all(outcome.detail == outcomes[0].detail for outcome in outcomes[1:8]), outcomes


def test_a_judge_serves_at_most_max_jobs_samples(sandbox: Sandbox) -> None:
    count = live_judge.MAX_JOBS + 3
    outcomes = run_programs(sandbox, [program_with_tests(DOUBLES + f"# {n}\n") for n in range(count)])
    assert all(outcome.verdict is Verdict.PASSED for outcome in outcomes)
    pids = judges(outcomes)
    assert len(set(pids[: live_judge.MAX_JOBS])) == 1 and len(set(pids)) == 2


def test_another_problem_or_another_limit_gets_its_own_judge(sandbox: Sandbox) -> None:
    other = program_with_tests(DOUBLES, check="assert candidate(3) == 6")
    outcomes = run_programs(sandbox, [program_with_tests(DOUBLES), other, program_with_tests(DOUBLES)])
    assert [outcome.verdict for outcome in outcomes] == [Verdict.PASSED] * 3, outcomes
    assert len(set(judges(outcomes))) == 3
    # Frames do not share judges either.
    again = run_programs(sandbox, [program_with_tests(DOUBLES)])
    assert judges(again)[0] not in judges(outcomes)
