"""POST /run_code's Python programs run in a process forked from the zygote's warm interpreter (script.py): each
one must end exactly as the same program does under a fresh `python3 main.py` in the same image, with the same
output and status (the program's own view of its interpreter included)."""

from __future__ import annotations

import base64
import dataclasses
import re

from sandbox.executor import Sandbox
from service.formats.native import as_program
from service.formats.program import Program, program_for
from service.formats.run_code import completion_for
from tests.sandbox.programs import run_programs
from types import SimpleNamespace


def _problem() -> SimpleNamespace:
    return SimpleNamespace(format="run_code", language="python", time_limit_s=None, memory_mb=None,
                           compile_time_limit_s=None, compile_memory_mb=None)


def _pair(code: str, stdin: str = "", files: dict[str, str] | None = None) -> tuple[Program, Program]:
    """(the program as /run_code runs it, the same exec'd as a fresh `python3 main.py`)."""
    encoded = {name: base64.b64encode(text.encode()).decode() for name, text in (files or {}).items()}
    warm = program_for(_problem(), completion_for(code, stdin, encoded))
    assert warm.native is not None and warm.native.warm
    fresh = as_program(dataclasses.replace(warm.native, warm=False), warm.language, warm.time_limit_s)
    return warm, fresh


# Each program's whole ending is compared: verdict, status, signal, stdout, stderr, the run's record.
PROGRAMS = {
    "stdin": ("print(sum(map(int, input().split())))\n", "1 2 3\n"),
    "traceback": ("def f(x):\n    return 1 / x\n\nprint('before')\nf(0)\n", ""),
    "syntax error": ("x = (\n", ""),
    "exit status": ("import sys\nprint('out')\nsys.exit(3)\n", ""),
    "exit message": ("import sys\nsys.exit('went wrong')\n", ""),
    "exit none": ("raise SystemExit(None)\n", ""),
    "exit 261": ("raise SystemExit(261)\n", ""),
    "keyboard interrupt": ("raise KeyboardInterrupt\n", ""),
    "sigsegv": ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", ""),
    "eof": ("print(input())\n", ""),
    "main module": (
        '"""doc"""\nimport sys, __main__\n'
        "print(list(globals())[:9], __name__, __doc__, __package__, __spec__, __cached__)\n"
        "print(__file__.endswith('/main.py'), sys.argv, sys.orig_argv, __main__.__dict__ is globals())\n"
        "print(sys.path[0] == __file__.rsplit('/', 1)[0], [p for p in sys.path if 'passk' in p])\n"
        "print(type(__loader__).__name__, __loader__.name, __builtins__ is __import__('builtins'))\n",
        "",
    ),
    "streams": (
        "import sys\n"
        "for s in (sys.stdin, sys.stdout, sys.stderr):\n"
        "    print(s.name, s.mode, s.encoding, s.errors, s.line_buffering, s.write_through, type(s.buffer).__name__,"
        " s.buffer.raw.closefd, s.newlines)\n"
        "print(sys.stdin is sys.__stdin__, sys.stdout is sys.__stdout__, sys.stderr is sys.__stderr__)\n",
        "",
    ),
    "descriptors and signals": (
        "import os, signal\nprint(sorted(os.listdir('/proc/self/fd')))\n"
        "print([signal.getsignal(s) for s in (signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTERM, "
        "signal.SIGCHLD, signal.SIGSEGV)])\nprint(signal.pthread_sigmask(signal.SIG_BLOCK, []))\n"
        "print(sorted(os.environ), os.environ['HOME'] == os.getcwd())\n",
        "",
    ),
    "locale": ("import locale, sys\nprint(locale.getpreferredencoding(False), locale.getlocale(), "
               "sys.getfilesystemencoding(), sys.getfilesystemencodeerrors(), open('f', 'w').encoding)\n", ""),
    "surrogates": ("import sys\nprint('a\\udcffb')\nprint('c\\udcffd', file=sys.stderr)\n", ""),
    "buffered output lost by os._exit": ("import os, sys\nprint('kept', file=sys.stderr)\nprint('lost')\nos._exit(0)\n", ""),
    "stderr before stdout": ("import sys\nprint('out 1')\nprint('err', file=sys.stderr)\nprint('out 2')\n", ""),
    "atexit and threads": (
        "import atexit, threading, time\natexit.register(lambda: print('at exit'))\n"
        "def later():\n    time.sleep(0.2)\n    print('thread done')\n"
        "threading.Thread(target=later).start()\nprint('main done')\n",
        "",
    ),
    "atexit after an exception": ("import atexit\natexit.register(print, 'cleanup')\nraise ValueError('no')\n", ""),
    "local module": ("import helper\nprint(helper.twice(21), helper.__file__.endswith('/helper.py'))\n", ""),
    "future flags": ("def f(x: undefined_name) -> None:\n    pass\nprint(f.__annotations__)\n", ""),
    "recursion limit": ("import sys\nprint(sys.getrecursionlimit())\n", ""),
    "broken pipe": ("import os\nos.close(1)\nprint('x')\n", ""),
    "chained exception": (
        "try:\n    {}['k']\nexcept KeyError as e:\n    raise RuntimeError('wrapped') from e\n", "",
    ),
    "memory": ("x = bytearray(1 << 30)\n", ""),
    "forked child": ("import os\npid = os.fork()\nif pid == 0:\n    print('child')\n    os._exit(4)\n"
                     "print('parent', os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n", ""),
    "unicode source": ("# -*- coding: latin-1 -*-\nprint('caf\\xe9')\ns = 'ünïcode'\nprint(len(s))\n", ""),
}
FILES = {"local module": {"helper.py": "def twice(x):\n    return 2 * x\n"}}


def _ending(outcome) -> tuple:  # noqa: ANN001
    """How a program ended, its scratch directory's name (numbered by the job's place in the container) left out."""
    run = (outcome.failure or {}).get("run") or {}
    return tuple(re.sub(r"/tmp/c\d+/", "/tmp/c/", part) if isinstance(part, str) else part for part in (
        outcome.verdict, outcome.exit_code, outcome.signal, outcome.stdout, outcome.stderr, run.get("return_code"),
        run.get("timed_out")))


def test_a_program_ends_as_under_a_fresh_interpreter(sandbox: Sandbox) -> None:
    pairs = [_pair(code, stdin, FILES.get(name)) for name, (code, stdin) in PROGRAMS.items()]
    outcomes = run_programs(sandbox, [program for pair in pairs for program in pair], time_limit_s=5.0)
    different = {}
    for index, name in enumerate(PROGRAMS):
        warm, fresh = _ending(outcomes[2 * index]), _ending(outcomes[2 * index + 1])
        if warm != fresh:
            different[name] = {"warm": warm, "fresh": fresh}
    assert not different, different
    # And they did run: a few endings checked outright.
    by_name = dict(zip(PROGRAMS, outcomes[::2]))
    assert by_name["stdin"].stdout == "6\n" and by_name["stdin"].verdict == "passed"
    assert "ZeroDivisionError" in by_name["traceback"].stderr and "script.py" not in by_name["traceback"].stderr
    assert by_name["exit status"].failure["run"]["return_code"] == 3
    assert by_name["keyboard interrupt"].failure["run"]["return_code"] == -2
    assert by_name["sigsegv"].failure["run"]["return_code"] == -11
    assert by_name["atexit and threads"].stdout == "main done\nthread done\nat exit\n"


def test_each_program_gets_a_freshly_seeded_random(sandbox: Sandbox) -> None:
    """Each program imports `random` seeded anew, as under a fresh interpreter: the zygote never loads it (and
    script.py would reseed it if it did)."""
    probe = "import random\nprint(random.random(), random.getrandbits(64))\n"
    outcomes = run_programs(sandbox, [_pair(probe)[0] for _ in range(3)], time_limit_s=5.0)
    assert [outcome.verdict for outcome in outcomes] == ["passed"] * 3, outcomes
    assert len({outcome.stdout for outcome in outcomes}) == 3


def test_limits_stop_it_and_the_container_goes_on(sandbox: Sandbox) -> None:
    """A loop past its limit, then one that leaves a process behind: both stopped as an exec'd program is, and the
    container (its zygote) serves the next program."""
    loop, _ = _pair("while True:\n    pass\n")
    orphan, _ = _pair("import os, time\nif os.fork() == 0:\n    time.sleep(60)\nprint('left one')\n")
    after, _ = _pair("print('after')\n")
    outcomes = run_programs(sandbox, [loop, orphan, after], time_limit_s=1.0)
    stopped, left, next_one = outcomes
    assert stopped.verdict == "timeout" and stopped.failure["run"]["timed_out"], stopped
    assert left.stdout == "left one\n", left
    assert next_one.verdict == "passed" and next_one.stdout == "after\n", next_one
