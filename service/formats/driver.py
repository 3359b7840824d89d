"""The judge that runs inside the sandbox for stdin/stdout and call-based problems.

Standard library only and no `from __future__` import: harness.py embeds this
source (after compare.py's) in the program text, followed by one call
`_passk_main(<config as a JSON string>)`. The supervisor then runs it like any
program: it passes if this returns normally.

Each case runs in a child process forked from the driver:

- stdin and stdout are real file descriptors (memfds) holding the case input
  and receiving the output, so `input()`, `sys.stdin.buffer`, `open(0)`,
  `os.read(0, ...)` and `os.write(1, ...)` all behave as on a judge;
- the candidate's code never runs in the driver's process: it cannot patch
  the comparison, catch the timeout, or reach the supervisor's report pipe
  (the child replaces descriptor 3 before the candidate starts), and state
  left by one case does not leak into the next;
- the driver can always kill a case that runs too long.

Outcomes, as verdicts of the whole sample (the first failing case decides):

- wrong answer -> AssertionError -> `failed`;
- an exception or a non-zero exit in the program -> RuntimeError -> `error`
  (MemoryError -> `memory`); for stdin/stdout, `sys.exit(0)` / `exit()` is a
  normal end, as on a judge;
- a case over its time limit -> `timeout`. Raising an exception would be
  judged `error`, hiding what happened, so the driver prints why on stderr
  and ends the way the sandbox reports a timeout:
  * over its CPU time (user + system, as the sandbox measures; the child
    also gets RLIMIT_CPU so a busy loop stops at once): the driver ends
    itself with SIGXCPU, a CPU timeout, final and cacheable;
  * still running at the wall-clock backstop (2x the limit + 0.5 s) without
    having used its CPU time (it sleeps or blocks, or the machine is
    overloaded): the driver waits for the sandbox's own wall-clock limit, a
    wall timeout, which the worker re-runs alone before believing it.

Threat model: this rejects wrong answers however they are dressed (objects
that equal everything, wrong types, exits before the checks, printed pass
markers). A program that deliberately searches its own memory for the
expected outputs (they are in the program text) is out of scope, as it is for
every in-process harness.
"""

import builtins as _builtins
import json as _json
import math as _math
import os as _os
import resource as _resource
import select as _select
import signal as _signal
import sys as _sys
import time as _time
import traceback as _traceback

CASE_WALL_FACTOR = 2.0
CASE_WALL_SLACK_S = 0.5
# Output beyond 4x the expected size plus this is a wrong answer, not something to store.
OUTPUT_SLACK_BYTES = 1 << 20
_CHILD_REPORT_FD = 3
_MAX_DEPTH = 100
_EFBIG = 27
_MAX_FD = 1 << 16

# Bound now: in a child these run after the candidate's code, which may have
# replaced the builtins it sees.
_type, _len, _hex, _float_hex, _dict_items = type, len, hex, float.hex, dict.items
_bool, _int, _float, _str, _list, _tuple, _dict = bool, int, float, str, list, tuple, dict
_set, _frozenset, _bytes, _complex, _bytes_hex = set, frozenset, bytes, complex, bytes.hex
_write, _exit, _dumps = _os.write, _os._exit, _json.dumps
_callable, _getattr, _isinstance, _exec = callable, getattr, isinstance, exec


try:
    clip  # defined by compare.py's source, which precedes this one in the program text
except NameError:  # imported on the host (tests, tooling) rather than embedded
    from service.formats.compare import clip, output_mismatch, value_mismatch


class Unsupported:
    """Stands in for a returned value of a type no JSON answer can match (set, custom class...)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name} object>"


# ------------------------------------------------------------------ child side


def _class_name(kind: type) -> str:
    try:
        name = _type.__dict__["__name__"].__get__(kind, _type)
        return name if _type(name) is _str else "object"
    except BaseException:
        return "object"


def _encode(value: object, depth: int = 0) -> list:
    """A tagged JSON form that keeps the types JSON would lose (tuple, int vs float, set, bytes, complex)."""
    kind = _type(value)
    if depth > _MAX_DEPTH:
        return ["o", "deeply nested value"]
    if value is None:
        return ["n"]
    if kind is _bool:
        return ["b", value]
    if kind is _int:
        return ["i", _hex(value)]  # not str(): CPython refuses > 4300 decimal digits
    if kind is _float:
        return ["f", _float_hex(value)]
    if kind is _str:
        return ["s", value]
    if kind is _list or kind is _tuple:
        return ["l" if kind is _list else "t", [_encode(item, depth + 1) for item in value]]
    if kind is _dict:
        return ["d", [[_encode(k, depth + 1), _encode(v, depth + 1)] for k, v in _dict_items(value)]]
    if kind is _set or kind is _frozenset:
        return ["S" if kind is _set else "F", [_encode(item, depth + 1) for item in value]]
    if kind is _bytes:
        return ["y", _bytes_hex(value)]
    if kind is _complex:
        return ["c", [_float_hex(value.real), _float_hex(value.imag)]]
    return ["o", _class_name(kind)]


def _describe(exc: BaseException) -> str:
    try:
        text = f"{_class_name(_type(exc))}: {exc}"
    except BaseException:
        text = _class_name(_type(exc))
    return text[:500]


def _report(message: dict) -> None:
    try:
        _write(_CHILD_REPORT_FD, _dumps(message).encode("utf-8", "replace"))
    except BaseException:
        pass  # the candidate closed it: the exit status still tells ok from not ok


def _print_traceback(exc: BaseException) -> None:
    try:
        text = "".join(_traceback.format_exception(_type(exc), exc, exc.__traceback__, limit=-5))
        _write(2, text[-2000:].encode("utf-8", "replace"))
    except BaseException:
        pass


def _flush(*streams: object) -> None:
    for stream in streams:
        try:
            stream.flush()  # type: ignore[attr-defined]
        except OSError:
            raise
        except BaseException:
            pass


def _solution_callable(namespace: dict, fn_name: str) -> object:
    # LeetCode style (APPS, LiveCodeBench) first: a method of a fresh `Solution`.
    solution = namespace.get("Solution")
    if _isinstance(solution, _type):
        method = _getattr(solution(), fn_name, None)
        if _callable(method):
            return method
    function = namespace.get(fn_name)
    if _callable(function):
        return function
    raise NameError(f"the program defines neither {fn_name}() nor a Solution class with a {fn_name} method")


def _lower_limit(which: int, soft: int, hard: int) -> None:
    old_soft, old_hard = _resource.getrlimit(which)
    if old_hard != _resource.RLIM_INFINITY:
        hard = min(hard, old_hard)
    if old_soft != _resource.RLIM_INFINITY:
        soft = min(soft, old_soft)
    _resource.setrlimit(which, (min(soft, hard), hard))


def _child(config: dict, code: object, setup: object, case: dict, fds: tuple, output_cap: int) -> None:
    """Runs one case in the forked process; never returns."""
    stdin_fd, stdout_fd, report_fd = fds
    stdio = config["mode"] == "stdio"
    try:
        _os.setpgid(0, 0)
        if stdio:
            _os.dup2(stdin_fd, 0)
            _os.dup2(stdout_fd, 1)
        # Replaces the supervisor's report pipe (also fd 3) in this process only.
        _os.dup2(report_fd, _CHILD_REPORT_FD)
        _os.closerange(_CHILD_REPORT_FD + 1, _MAX_FD)
        cpu = _math.ceil(float(config["case_time_limit_s"]))
        _lower_limit(_resource.RLIMIT_CPU, cpu, cpu + 1)
        if stdio:
            _lower_limit(_resource.RLIMIT_FSIZE, output_cap, output_cap)
            _sys.stdin = open(0, "r", encoding="utf-8", errors="replace", closefd=False)
            _sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    except BaseException as exc:
        _report({"status": "setup", "error": _describe(exc)})
        _exit(1)
    stdout = _sys.stdout
    namespace = {"__name__": "__main__" if stdio else "solution", "__builtins__": _builtins}
    try:
        if setup is not None:
            _exec(setup, namespace)
        _exec(code, namespace)
        value = None
        if not stdio:
            value = _encode(_solution_callable(namespace, config["fn_name"])(*case["input"]))
        _flush(_sys.stdout, stdout)
        _report({"status": "ok", "value": value})
        _exit(0)
    except SystemExit as exc:
        status = exc.code
        if not (stdio and (status is None or (_type(status) in (_int, _bool) and status == 0))):
            shown = status if _type(status) in (_int, _bool, _str) else _class_name(_type(status))
            _report({"status": "exit", "code": _str(shown)[:200]})
            _exit(1)
        try:  # exit(0) ends a stdin/stdout program normally, as on a judge
            _flush(_sys.stdout, stdout)
            _report({"status": "ok", "value": None})
            _exit(0)
        except BaseException as error:
            failure: BaseException = error
    except BaseException as error:
        failure = error
    try:
        _flush(_sys.stdout, stdout)
    except BaseException:
        pass
    _print_traceback(failure)
    _report(
        {
            "status": "raised",
            "error": _describe(failure),
            "memory": _isinstance(failure, MemoryError),
            "too_much_output": _isinstance(failure, OSError) and _getattr(failure, "errno", None) == _EFBIG,
        }
    )
    _exit(1)


# ----------------------------------------------------------------- driver side


def _memfd(name: str, data: bytes) -> int:
    try:
        fd = _os.memfd_create(name)
    except (AttributeError, OSError):
        import tempfile

        fd, path = tempfile.mkstemp(prefix=f"passk-{name}-")
        _os.unlink(path)
    view = memoryview(data)
    while view:
        view = view[_os.write(fd, view):]
    _os.lseek(fd, 0, 0)
    return fd


def _read_all(fd: int, limit: int) -> bytes:
    _os.lseek(fd, 0, 0)
    chunks, total = [], 0
    while total < limit:
        chunk = _os.read(fd, min(1 << 20, limit - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += _len(chunk)
    return b"".join(chunks)


def _kill_group(pid: int) -> None:
    try:
        _os.killpg(pid, _signal.SIGKILL)
    except OSError:
        pass


def _wait(pid: int, wall_limit_s: float) -> tuple[int, float, bool]:
    """(wait status, CPU seconds, hit the wall-clock backstop)."""
    deadline = _time.monotonic() + wall_limit_s
    try:
        pidfd = _os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    try:
        while True:
            waited, status, usage = _os.wait4(pid, _os.WNOHANG)
            if waited == pid:
                return status, usage.ru_utime + usage.ru_stime, False
            remaining = deadline - _time.monotonic()
            if remaining <= 0:
                break
            if pidfd is not None:
                _select.select([pidfd], [], [], remaining)
            else:
                _time.sleep(min(remaining, 0.005))
    finally:
        if pidfd is not None:
            _os.close(pidfd)
    _kill_group(pid)
    _, status, usage = _os.wait4(pid, 0)
    return status, usage.ru_utime + usage.ru_stime, True


def _cpu_timeout(label: str, limit_s: float, cpu_s: float) -> None:
    _say(f"{label} exceeded the per-case time limit of {limit_s:g} s (used {cpu_s:.2f} s of CPU)")
    # The sandbox reports a program ended by SIGXCPU as a CPU timeout.
    _signal.signal(_signal.SIGXCPU, _signal.SIG_DFL)
    _os.kill(_os.getpid(), _signal.SIGXCPU)
    _time.sleep(5)
    raise TimeoutError(f"{label} exceeded the per-case time limit of {limit_s:g} s")


def _wall_timeout(label: str, limit_s: float, cpu_s: float) -> None:
    _say(
        f"{label} exceeded the per-case time limit of {limit_s:g} s: still running after "
        f"{limit_s * CASE_WALL_FACTOR + CASE_WALL_SLACK_S:g} s of wall-clock time, having used {cpu_s:.2f} s of CPU; "
        "waiting for the sandbox's wall-clock limit"
    )
    # Only the sandbox's own wall-clock limit yields a wall timeout, the kind that is re-run alone.
    while True:
        _time.sleep(3600)


def _say(message: str) -> None:
    _write(2, f"\npassk: {message}\n".encode("utf-8", "replace"))


def _decode(node: list) -> object:
    tag = node[0]
    if tag == "n":
        return None
    if tag == "b":
        return _bool(node[1])
    if tag == "i":
        return _int(node[1], 16)
    if tag == "f":
        return _float.fromhex(node[1])
    if tag == "s":
        return _str(node[1])
    if tag == "l":
        return [_decode(item) for item in node[1]]
    if tag == "t":
        return tuple(_decode(item) for item in node[1])
    if tag == "d":
        return {_decode(k): _decode(v) for k, v in node[1]}
    if tag == "S" or tag == "F":
        items = [_decode(item) for item in node[1]]
        return _set(items) if tag == "S" else _frozenset(items)
    if tag == "y":
        return _bytes.fromhex(node[1])
    if tag == "c":
        return _complex(_float.fromhex(node[1][0]), _float.fromhex(node[1][1]))
    return Unsupported(_str(node[1]))


def _read_report(fd: int) -> dict | None:
    try:
        report = _json.loads(_read_all(fd, 1 << 30).decode("utf-8", "replace"))
    except ValueError:
        return None
    return report if _type(report) is _dict else None


def _run_case(config: dict, code: object, setup: object, index: int) -> None:
    cases = config["cases"]
    case = cases[index]
    stdio = config["mode"] == "stdio"
    limit = float(config["case_time_limit_s"])
    if stdio:
        label = f"case {index + 1} of {_len(cases)} (input {clip(case['input'], 40)})"
        expected_size = _len(case["output"].encode("utf-8"))
        output_cap = 4 * expected_size + OUTPUT_SLACK_BYTES
        stdin_fd, stdout_fd = _memfd("stdin", case["input"].encode("utf-8")), _memfd("stdout", b"")
    else:
        label = f"case {index + 1} of {_len(cases)} ({config['fn_name']}(*{clip(case['input'], 40)}))"
        output_cap = 0
        stdin_fd = stdout_fd = None
    report_fd = _memfd("report", b"")
    pid = _os.fork()
    if pid == 0:
        _child(config, code, setup, case, (stdin_fd, stdout_fd, report_fd), output_cap)
    try:
        _os.setpgid(pid, pid)  # also in the child: whichever runs first wins the race
    except OSError:
        pass
    status, cpu, wall = _wait(pid, limit * CASE_WALL_FACTOR + CASE_WALL_SLACK_S)
    _kill_group(pid)  # whatever the case started must not run on into the next one
    if cpu > limit or _os.waitstatus_to_exitcode(status) == -_signal.SIGXCPU:
        _cpu_timeout(label, limit, cpu)
    if wall:
        _wall_timeout(label, limit, cpu)
    report = _read_report(report_fd)
    got = _read_all(stdout_fd, output_cap + 1) if stdio else b""
    for fd in (stdin_fd, stdout_fd, report_fd):
        if fd is not None:
            _os.close(fd)
    _judge(config, case, label, status, report, got, output_cap)


def _judge(config: dict, case: dict, label: str, status: int, report: dict | None, got: bytes, cap: int) -> None:
    exit_code = _os.waitstatus_to_exitcode(status)
    kind = report.get("status") if report else None
    if exit_code < 0:
        signum = -exit_code
        if signum == _signal.SIGXFSZ:
            raise AssertionError(f"{label}: output exceeds {cap} bytes")
        raise RuntimeError(f"{label}: the program was killed by {_signal.Signals(signum).name}")
    if kind == "raised":
        if report.get("too_much_output"):  # type: ignore[union-attr]
            raise AssertionError(f"{label}: output exceeds {cap} bytes")
        error = report.get("error")  # type: ignore[union-attr]
        if report.get("memory"):  # type: ignore[union-attr]
            raise MemoryError(f"{label}: {error}")
        raise RuntimeError(f"{label}: {error}")
    if kind == "exit":
        raise RuntimeError(f"{label}: the program exited with status {report.get('code')}")  # type: ignore[union-attr]
    if kind == "setup":
        raise RuntimeError(f"{label}: the judge could not start the case: {report.get('error')}")  # type: ignore[union-attr]
    if exit_code != 0:
        raise RuntimeError(f"{label}: the program exited with status {exit_code}")
    abs_tol, rel_tol = float(config["abs_tol"]), float(config["rel_tol"])
    if config["mode"] == "stdio":
        if _len(got) > cap:
            raise AssertionError(f"{label}: output exceeds {cap} bytes")
        mismatch = output_mismatch(got.decode("utf-8", "replace"), case["output"], config["policy"], abs_tol, rel_tol)
    else:
        if kind != "ok" or not _isinstance(report.get("value"), _list):  # type: ignore[union-attr]
            raise RuntimeError(f"{label}: the program ended without returning a result")
        try:
            value = _decode(report["value"])  # type: ignore[index]
        except Exception:
            raise RuntimeError(f"{label}: the returned value could not be read back") from None
        mismatch = value_mismatch(value, case["output"], abs_tol, rel_tol)
    if mismatch:
        raise AssertionError(f"{label}: {mismatch}")


def _passk_main(config_text: str) -> None:
    config = _json.loads(config_text)
    # Compiled once, here: a syntax error is one `error` verdict, not one per case.
    setup = compile(config["setup"], "<setup>", "exec") if config.get("setup") else None
    code = compile(config["source"], "<solution>", "exec")
    for index in range(_len(config["cases"])):
        _run_case(config, code, setup, index)
