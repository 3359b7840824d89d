"""HumanEval/MBPP tests run in the judge's process, the candidate in a child it calls: in the real sandbox.

Every program here is built as the worker builds it (service.formats.program.program_for).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from sandbox.executor import Outcome, Sandbox
from sandbox.runtime.wire import decode as _decode, encode as _encode
from service.formats.program import Program, program_for
from tests.sandbox.programs import run_programs

PROMPT = 'def add(a: int, b: int) -> int:\n    """Sum of a and b."""\n'
TEST = "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n"
RIGHT = "    return a + b\n"

FRAME_WALK = (
    "import os, sys\n"
    "def _forge():\n"
    "    frame = sys._getframe()\n"
    "    while frame is not None:\n"
    "        token = frame.f_locals.get('pass_line')\n"
    "        if token:\n"
    "            for fd in range(3, 64):\n"
    "                try:\n"
    "                    os.write(fd, token)\n"
    "                except OSError:\n"
    "                    pass\n"
    "            os._exit(0)\n"
    "        frame = frame.f_back\n"
)


def humaneval(completion: str, prompt: str = PROMPT, test: str = TEST, entry_point: str = "add") -> Program:
    return program_for(SimpleNamespace(format="humaneval", prompt=prompt, test=test, entry_point=entry_point), completion)


def run(sandbox: Sandbox, programs: list[Program]) -> list[Outcome]:
    return run_programs(sandbox, programs, time_limit_s=2.0)


def verdicts(outcomes: list[Outcome]) -> list[str]:
    return [outcome.verdict.value for outcome in outcomes]


def explain(outcomes: list[Outcome]) -> list[tuple[str, str | None]]:
    return [(o.verdict.value, o.detail) for o in outcomes]


def test_values_cross_with_their_exact_types() -> None:
    values = [None, True, 0, -(10**5000), 1.5, math.inf, 2 + 3j, "é\x00", b"\xff\x00", [1, (2, 3)], {"a": {1: 2.0}},
              {1, 2}, frozenset({(1, 2)}), ()]
    for value in values:
        back = _decode(_encode(value))
        assert back == value and type(back) is type(value)
    assert _decode(_encode(True)) is True
    assert _encode(object())[0] == "o"


def test_the_reward_hacks_that_beat_an_in_process_harness_all_fail(sandbox: Sandbox) -> None:
    hacks = {
        # An object equal to everything: rejected before any comparison runs.
        "always-equal": "    class Yes:\n        def __eq__(self, other):\n            return True\n    return Yes()\n",
        # An int subclass that lies about equality: only exact built-in types cross.
        "int-subclass": "    class Five(int):\n        def __eq__(self, other):\n            return True\n    return Five(0)\n",
        # Walking the stack to the sandbox's pass token, during the call and at import time.
        "frame-walk-in-call": "    _forge()\n" + FRAME_WALK,
        "frame-walk-at-import": "    return 0\n" + FRAME_WALK + "_forge()\n",
        # Rebinding what the tests use, tracing them away, exiting early.
        "patch-builtins": "    return 0\nimport builtins\nbuiltins.AssertionError = type('Quiet', (Exception,), {})\n",
        "settrace": "    return 0\nimport sys\nsys.settrace(lambda *args: None)\n",
        "exit-0": "    import os\n    os._exit(0)\n",
        "sys-exit": "    raise SystemExit(0)\n",
        "kill-the-judge": "    import os, signal\n    os.kill(os.getppid(), signal.SIGKILL)\n",
        "print-a-pass": "    print('PASS')\n    return 0\n",
        # The judge's report pipe through /proc, with the token copied from the stack.
        "proc-fd-of-the-judge": "    _forge_via_proc()\n" + FRAME_WALK.replace("for fd in range(3, 64)", "for fd in [0]").replace(
            "os.write(fd, token)", "os.write(os.open(f'/proc/{os.getppid()}/fd/3', os.O_WRONLY), token)"
        ).replace("def _forge", "def _forge_via_proc"),
    }
    outcomes = run(sandbox, [humaneval(completion) for completion in hacks.values()])
    assert "passed" not in verdicts(outcomes), list(zip(hacks, explain(outcomes), strict=True))
    by_name = dict(zip(hacks, outcomes, strict=True))
    assert "returned a value of type Yes" in (by_name["always-equal"].detail or "")
    assert "returned a value of type Five" in (by_name["int-subclass"].detail or "")
    # The judge runs under another uid: the candidate may not signal it (nor its own parent, the zygote).
    assert by_name["kill-the-judge"].verdict.value == "error" and "PermissionError" in (by_name["kill-the-judge"].detail or "")
    assert by_name["exit-0"].verdict.value == "failed" and by_name["sys-exit"].verdict.value == "failed"


def test_outcomes_keep_human_evals_meaning(sandbox: Sandbox) -> None:
    cases = {
        "    return a + b\n": "passed",
        "    return a - b\n": "failed",
        "    raise ValueError('no')\n": "error",
        "    assert False, 'own assert'\n": "failed",
        "    return (\n": "error",  # syntax error
        "    import os\n    os._exit(3)\n": "error",
        "    while True:\n        pass\n": "timeout",
        "    return len(bytearray(1 << 30))\n": "memory",
        "    return a + b\nimport functools\nadd = functools.lru_cache(maxsize=None)(add)\n": "passed",
    }
    outcomes = run(sandbox, [humaneval(completion) for completion in cases])
    assert verdicts(outcomes) == list(cases.values()), explain(outcomes)
    assert "ValueError: no" in (outcomes[2].detail or "")
    assert outcomes[6].timeout_kind == "cpu"


def test_a_sleeping_candidate_is_a_wall_clock_timeout(sandbox: Sandbox) -> None:
    (outcome,) = run(sandbox, [humaneval("    import time\n    time.sleep(60)\n")])
    assert outcome.verdict.value == "timeout" and outcome.timeout_kind == "wall"


def test_tests_see_plain_values_exceptions_and_the_prompts_own_helpers(sandbox: Sandbox) -> None:
    prompt = (
        "def double(x):\n    return 2 * x\n\n"
        "def solve(items, *, scale=1):\n    \"\"\"Set of doubled items, times scale; ValueError if empty.\"\"\"\n"
    )
    test = (
        "def check(candidate):\n"
        "    assert candidate([1, 2]) == {double(1), double(2)}\n"
        "    assert candidate([3], scale=2) == {12}\n"
        "    assert type(candidate([1])) is set\n"
        "    try:\n        candidate([])\n    except ValueError as exc:\n        assert 'empty' in str(exc)\n"
        "    else:\n        raise AssertionError('no ValueError')\n"
    )
    right = "    if not items:\n        raise ValueError('empty')\n    return {double(x) * scale for x in items}\n"
    # Redefining the prompt's helper fools a single-process harness; the judge keeps the prompt's own.
    cheat = "    if not items:\n        raise ValueError('empty')\n    return {0}\n\ndef double(x):\n    return 0\n"
    outcomes = run(sandbox, [humaneval(c, prompt, test, "solve") for c in (right, cheat)])
    assert verdicts(outcomes) == ["passed", "failed"], explain(outcomes)


def test_candidate_output_is_kept_and_unsendable_arguments_are_explained(sandbox: Sandbox) -> None:
    printing = humaneval("    print('thinking', a, b)\n    return a + b\n")
    lambda_test = "def check(candidate):\n    assert candidate(lambda: 1, 2) == 3\n"
    unsendable = humaneval(RIGHT, test=lambda_test)
    first, second = run(sandbox, [printing, unsendable])
    assert first.verdict.value == "passed" and "thinking 2 3" in first.stdout
    assert second.verdict.value == "error" and "cannot be sent to the candidate's process" in (second.detail or "")


def test_mbpp_asserts_call_every_function_the_candidate_defines(sandbox: Sandbox) -> None:
    problem = SimpleNamespace(
        format="mbpp", setup_code="import math", entry_point="hyp",
        test="assert hyp(3, 4) == 5.0\nassert isclose_(hyp(1, 1), math.sqrt(2))",
    )
    right = "def hyp(a, b):\n    return math.hypot(a, b)\n\ndef isclose_(x, y):\n    return abs(x - y) < 1e-9\n"
    wrong = "def hyp(a, b):\n    return a + b\n\ndef isclose_(x, y):\n    return True\n"
    outcomes = run(sandbox, [program_for(problem, completion) for completion in (right, wrong)])
    assert verdicts(outcomes) == ["passed", "failed"], explain(outcomes)


@pytest.mark.parametrize("prompt", ["def add(a, b):\n", "class K:\n    def add(self, a, b):\n"])
def test_prompts_that_do_not_compile_alone_still_work(sandbox: Sandbox, prompt: str) -> None:
    completion = RIGHT if prompt.startswith("def") else "        return a + b\n\ndef add(a, b):\n    return K().add(a, b)\n"
    (outcome,) = run(sandbox, [humaneval(completion, prompt=prompt)])
    assert outcome.verdict.value == "passed", explain([outcome])


CAPABILITIES = (
    "def _capabilities():\n"
    "    import os\n"
    "    status = dict(line.split(':\\t', 1) for line in open('/proc/self/status').read().splitlines() if ':\\t' in line)\n"
    "    return (os.getuid(), os.geteuid(), int(status['CapEff'], 16), int(status['CapPrm'], 16), int(status['CapBnd'], 16))\n"
)


def test_judge_and_candidate_run_without_capabilities_and_with_an_empty_bounding_set(sandbox: Sandbox) -> None:
    # PID 1 empties the bounding set once at start (every process it or the zygote forks inherits it); drop_to
    # then relies on that. Both sides are checked here: the candidate (from the zygote) and the judge (from PID 1).
    prompt = "def probe():\n    pass\n"
    test = CAPABILITIES + (
        "def check(candidate):\n"
        "    assert _capabilities() == (10002, 10002, 0, 0, 0), _capabilities()\n"
        "    assert candidate() == [10001, 10001, 0, 0, 0]\n"
    )
    completion = (
        "    import os\n"
        "    status = dict(line.split(':\\t', 1) for line in open('/proc/self/status').read().splitlines() if ':\\t' in line)\n"
        "    return [os.getuid(), os.geteuid(), int(status['CapEff'], 16), int(status['CapPrm'], 16), int(status['CapBnd'], 16)]\n"
    )
    outcomes = run(sandbox, [humaneval(completion, prompt=prompt, test=test, entry_point="probe")] * 2)
    assert verdicts(outcomes) == ["passed", "passed"], explain(outcomes)


ENVIRONMENT_PROMPT = "def environment():\n    pass\n"
# Runs in the judge: its own environment, and the candidate's (a dict crosses as a value), each exactly the four
# names with HOME and TMPDIR its own working directory; several programs in one container, so that a process
# forked after another ran sees none of what that one set.
ENVIRONMENT_TEST = (
    "import os\n"
    "def exact(env, home):\n"
    "    return env == {'HOME': home, 'TMPDIR': home, 'PATH': '/usr/local/bin:/usr/bin:/bin', 'LANG': 'C.UTF-8'}\n"
    "def check(candidate):\n"
    "    assert exact(dict(os.environ), os.getcwd()), dict(os.environ)\n"
    "    theirs, home = candidate()\n"
    "    assert home != os.getcwd() and exact(theirs, home), theirs\n"
)
ENVIRONMENT_COMPLETION = (
    "    import os\n    seen = dict(os.environ)\n    os.environ['LEFT_BEHIND'] = '1'\n    return seen, os.getcwd()\n"
)


def test_every_process_starts_with_exactly_the_programs_environment(sandbox: Sandbox) -> None:
    judged = humaneval(ENVIRONMENT_COMPLETION, prompt=ENVIRONMENT_PROMPT, test=ENVIRONMENT_TEST, entry_point="environment")
    unjudged = Program(
        "import os\nassert set(os.environ) == {'HOME', 'TMPDIR', 'PATH', 'LANG'}, dict(os.environ)\n"
        "assert os.environ['HOME'] == os.environ['TMPDIR'] == os.getcwd(), dict(os.environ)\n"
        "os.environ['LEFT_BEHIND'] = '1'\n",
        judged=False,
    )
    outcomes = run(sandbox, [judged, unjudged, judged, unjudged])
    assert verdicts(outcomes) == ["passed"] * 4, explain(outcomes)
