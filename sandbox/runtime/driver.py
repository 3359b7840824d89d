"""The judge for stdin/stdout and call-based problems.

Runs in the judge's process (uid 10002). Each case runs in a fresh candidate
process from the zygote (uid 10001), which never held the cases' expected
outputs: it gets only its source, the case's input on fd 0 (stdio) or the
call's arguments (call), and a descriptor for its one report.

- stdin and stdout are real file descriptors (memfds) holding the case input
  and receiving the output, so `input()`, `sys.stdin.buffer`, `open(0)`,
  `os.read(0, ...)` and `os.write(1, ...)` all behave as on a judge;
- the comparison happens here, where the candidate's code never runs;
- after every case every candidate process is killed, so nothing a case
  started runs on into the next.

Outcomes, as verdicts of the whole sample (the first failing case decides):

- wrong answer -> AssertionError -> `failed`;
- an exception or a non-zero exit in the program -> RuntimeError -> `error`
  (MemoryError -> `memory`); for stdin/stdout, `sys.exit(0)` / `exit()` is a
  normal end, as on a judge;
- a case over its time limit -> `timeout`. The driver prints why on stderr
  and ends the way the sandbox reports a timeout:
  * over its CPU time (user + system; the candidate also gets RLIMIT_CPU so
    a busy loop stops at once): the driver ends itself with SIGXCPU, a CPU
    timeout, final and cacheable;
  * still running at the wall-clock backstop (2x the limit + 0.5 s) without
    having used its CPU time (it sleeps or blocks, or the machine is
    overloaded): the driver waits for the sandbox's own wall-clock limit, a
    wall timeout, which the worker re-runs alone before believing it.
"""

import json as _json
import os as _os
import signal as _signal
import time as _time

from . import failure as _failure
from . import wire
from .compare import clip, output_mismatch, value_mismatch
from .process import signal_name
from .trusted_tests import SPAWN_FD
from .zygote import SpawnFailed, Spawner

CASE_WALL_FACTOR = 2.0
CASE_WALL_SLACK_S = 0.5
# Output beyond 4x the expected size plus this is a wrong answer, not something to store.
OUTPUT_SLACK_BYTES = 1 << 20


def _memfd(name: str, data: bytes) -> int:
    fd = _os.memfd_create(name)
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
        total += len(chunk)
    return b"".join(chunks)


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
    _os.write(2, f"\npassk: {message}\n".encode("utf-8", "replace"))


def _run_case(spawner: Spawner, config: dict, index: int) -> None:
    cases = config["cases"]
    case = cases[index]
    stdio = config["mode"] == "stdio"
    limit = float(config["case_time_limit_s"])
    assignment = {"kind": "case", "mode": "stdio" if stdio else config["mode"], "source": config["source"],
                  "setup": config.get("setup") or ""}
    if stdio:
        label = f"case {index + 1} of {len(cases)} (input {clip(case['input'], 40)})"
        output_cap = 4 * len(case["output"].encode("utf-8")) + OUTPUT_SLACK_BYTES
        stdin_fd = _memfd("stdin", case["input"].encode("utf-8"))
    else:
        label = f"case {index + 1} of {len(cases)} ({config['fn_name']}(*{clip(case['input'], 40)}))"
        output_cap = None
        stdin_fd = _os.open("/dev/null", _os.O_RDONLY)
        assignment["fn_name"] = config["fn_name"]
        assignment["input"] = [wire.encode(value) for value in case["input"]]
    stdout_fd = _memfd("stdout", b"")
    report_fd = _memfd("report", b"")
    assignment_fd = wire.assignment_memfd(assignment)
    try:
        pid = spawner.spawn({0: stdin_fd, 1: stdout_fd, 2: 2, 3: assignment_fd, 4: report_fd},
                            cpu_s=limit, file_bytes=output_cap)
    except SpawnFailed as exc:
        if index == 0:
            raise  # nothing of the program ran yet: ours, a sandbox error
        # Earlier cases' processes are all killed and reaped before this one: what is exhausted, the program
        # exhausted (its files or IPC objects); a failure of the program.
        raise RuntimeError(f"{label}: could not start: {exc}") from None
    finally:
        _os.close(assignment_fd)
    ended = spawner.wait(pid, limit * CASE_WALL_FACTOR + CASE_WALL_SLACK_S)
    spawner.reset()  # whatever the case started must not run on into the next
    wall = ended is None
    status, cpu = ended if ended is not None else spawner.wait(pid)
    if cpu > limit or _os.waitstatus_to_exitcode(status) == -_signal.SIGXCPU:
        _cpu_timeout(label, limit, cpu)
    if wall:
        _wall_timeout(label, limit, cpu)
    _os.lseek(report_fd, 0, 0)
    report = wire.receive(report_fd)
    got = _read_all(stdout_fd, output_cap + 1) if stdio else b""
    for fd in (stdin_fd, stdout_fd, report_fd):
        _os.close(fd)
    try:
        _judge(config, case, label, status, report, got, output_cap)
    except (AssertionError, RuntimeError, MemoryError) as exc:
        info = {"kind": "case", "index": index, "input": _failure.clip(case["input"]),
                "expected": _failure.clip(case["output"]), "got": _failure.clip(_got_text(config, report, got))}
        raise type(exc)(_failure.clean(exc) + _failure.mark(info)) from None


def _got_text(config: dict, report: "dict | None", got: bytes) -> object:
    if config["mode"] == "stdio":
        return got[:1000].decode("utf-8", "replace")
    if report and report.get("status") == "ok" and isinstance(report.get("value"), list):
        try:
            return wire.decode(report["value"]) if wire.unsendable(report["value"]) is None else "(not a plain value)"
        except Exception:
            return "(unreadable)"
    if report and report.get("status") == "raised":
        return f"raised {report.get('error')}"
    return "(no result)"


def _judge(config: dict, case: dict, label: str, status: int, report: "dict | None", got: bytes, cap: "int | None") -> None:
    exit_code = _os.waitstatus_to_exitcode(status)
    kind = report.get("status") if report else None
    if exit_code < 0:
        signum = -exit_code
        if signum == _signal.SIGXFSZ:
            raise AssertionError(f"{label}: output exceeds {cap} bytes")
        raise RuntimeError(f"{label}: the program was killed by {signal_name(signum)}")
    if kind == "raised":
        if report.get("too_much_output"):  # type: ignore[union-attr]
            raise AssertionError(f"{label}: output exceeds {cap} bytes")
        error = report.get("error")  # type: ignore[union-attr]
        if report.get("memory"):  # type: ignore[union-attr]
            raise MemoryError(f"{label}: {error}")
        raise RuntimeError(f"{label}: {error}")
    if kind == "exit":
        raise RuntimeError(f"{label}: the program exited with status {report.get('code')}")  # type: ignore[union-attr]
    if exit_code != 0:
        raise RuntimeError(f"{label}: the program exited with status {exit_code}")
    abs_tol, rel_tol = float(config["abs_tol"]), float(config["rel_tol"])
    if config["mode"] == "stdio":
        if len(got) > cap:  # type: ignore[operator]
            raise AssertionError(f"{label}: output exceeds {cap} bytes")
        mismatch = output_mismatch(got.decode("utf-8", "replace"), case["output"], config["policy"], abs_tol, rel_tol)
    else:
        if kind != "ok" or not isinstance(report.get("value"), list):  # type: ignore[union-attr]
            raise RuntimeError(f"{label}: the program ended without returning a result")
        node = report["value"]  # type: ignore[index]
        unsendable = wire.unsendable(node)
        try:
            value = wire.decode(node) if unsendable is None else wire.Unsupported(unsendable)
        except Exception:
            raise RuntimeError(f"{label}: the returned value could not be read back") from None
        mismatch = value_mismatch(value, case["output"], abs_tol, rel_tol)
    if mismatch:
        raise AssertionError(f"{label}: {mismatch}")


def main(config_text: str) -> None:
    config = _json.loads(config_text)
    # Checked once, here: a syntax error is one `error` verdict, not one per case.
    if config.get("setup"):
        compile(config["setup"], "<setup>", "exec")
    compile(config["source"], "<solution>", "exec")
    spawner = Spawner(SPAWN_FD)
    for index in range(len(config["cases"])):
        _run_case(spawner, config, index)
