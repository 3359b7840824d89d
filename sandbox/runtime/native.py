"""Programs in other languages than Python: compile once (cached), then run the binary under limits.

Runs in PID 1 (see supervisor.py). A native job carries, besides its id and run limits, `native`:
{"language", "files": {name: text}, "compile": argv | null, "run": argv, "compile_time_limit_s",
"compile_memory_bytes", "toolchain", "limit_address_space", "env", "stderr_verdicts", "mode": "tests" |
"stdio", and for stdio "cases" [{"input", "output"}], "policy", "abs_tol", "rel_tol", "case_time_limit_s"}.

Every step (the compile, the run, each stdio case) is one process tree of the candidate's uid (10001),
started by exec in the job's scratch directory, with RLIMIT_CPU (and RLIMIT_AS unless the runtime
reserves address space it never uses), the container cgroup's CPU time for the whole tree, and a wall
backstop. The compile runs under the language's compile limits, never the program's.

Compile cache: keyed by sha256(toolchain version, compile argv, source files). What the compile left in
the scratch directory is copied (by PID 1 as the judge's uid 10002) to CACHE_ROOT/<key>, which the
candidate's uid can read but not change, and copied into the next identical program's scratch directory
instead of compiling. A compile that failed is not cached (it is cheap to fail again).

Self-checking programs ("tests"): a pass needs exit status 0 and the job's fresh pass token (given in
$PASSK_PASS_TOKEN) as the last line of stdout; the token line is removed from the stored stdout.
stdio programs: the binary runs once per case with the case's input; its output is compared (compare.py).

Precompiled headers (C++): a job may carry `pch`: {"file", "lines", "build", "max_bytes"}. `lines` are the
indices of the source's leading directive lines (chosen by the language module so that moving them, in
order, to a header of their own leaves the program's meaning unchanged: see sandbox/languages/cpp.py).
The header is exactly those lines; it is precompiled once per container (as the candidate's uid, in a
fresh directory, under the compile limits, with `build` = the compile's own flags) into
CACHE_ROOT/pch-<key>, key = sha256(toolchain, build argv, compile limits, header text): a pure function of
the header text, written by the judge's uid, read-only to candidates, so no program can change what
another program's header means. The program is then compiled as `#include "<that header>"`, `#line 1`,
and its text with those lines blank (every line keeps its number). A header whose build fails (a missing
include, a limit) is not used: the program compiles as it came, with its own diagnostics. If g++ rejects
the .gch it reads the header's text next to it instead (same meaning, slower; counted as rejected).
The image may hold headers precompiled when it was built, under the same keys (built under the language's
default compile limits, so only jobs with those limits match): PREBUILT_ROOT/pch-<key>, read-only, root's.
They are used before the container's own cache and never rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import resource
import secrets
import select
import shutil
import signal
import time

from . import compare, process
from .pchkey import PCH_HEADER, PREBUILT_ROOT, pch_key
from .streams import READ_CHUNK, Capture, HostGone, drain, read_ready, tree_cpu

CACHE_ROOT = "/var/cache/passk"
TREE_CPU_SLACK_S = 0.1
# stdout kept whole for stdio comparisons (beyond it the case fails as output too large).
STDIO_OUTPUT_CAP = 16 * 1024 * 1024
MAX_CACHED_BYTES = 64 * 1024 * 1024
PASS_TOKEN_ENV = "PASSK_PASS_TOKEN"

# Per container, for the host (reported with each result).
stats = {"compiles": 0, "compile_hits": 0, "pch_builds": 0, "pch_hits": 0, "pch_prebuilt": 0, "pch_rejected": 0}
# Header keys whose build failed or whose PCH is too big for the cache: compiled without a PCH.
_PCH_REFUSED: set = set()


class Step:
    """How one exec'd process tree ended."""

    def __init__(self) -> None:
        self.status = 0
        self.cpu = 0.0
        self.duration = 0.0
        self.wall_timeout = False
        self.tree_cpu_timeout = False
        self.oom = False
        self.stdout: Capture | None = None
        self.stderr: Capture | None = None

    @property
    def exit_code(self) -> int:
        return os.waitstatus_to_exitcode(self.status)

    @property
    def signum(self) -> int | None:
        code = self.exit_code
        return -code if code < 0 else None

    def cpu_timeout(self, limit_s: float) -> bool:
        rlimit = max(1, math.ceil(limit_s))
        return (
            self.tree_cpu_timeout
            or self.signum == signal.SIGXCPU
            or (self.signum == signal.SIGKILL and self.cpu >= rlimit - 0.05)
        )


def _child(argv: list, cwd: str, env: dict, cpu_s: float, memory_bytes: int | None, file_bytes: int,
           fds: dict) -> None:
    """In the forked child: become the candidate, set limits, exec. Never returns."""
    try:
        os.setsid()
        for target, fd in fds.items():
            os.dup2(fd, target)
        os.closerange(3, 1 << 16)
        process.oom_score(1000)
        for signum in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM, signal.SIGQUIT, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        process.drop_to(process.CANDIDATE_UID)
        os.chdir(cwd)
        cpu = max(1, math.ceil(cpu_s))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        if memory_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.execvpe(argv[0], argv, env)
    except BaseException as exc:
        try:
            os.write(2, f"passk: could not start {argv[0]}: {exc}\n".encode())
        finally:
            os._exit(127)


def exec_step(argv: list, cwd: str, env: dict, cpu_s: float, memory_bytes: int | None, file_bytes: int,
              wall_s: float, stdin_data: bytes | None, out_limit: int, err_limit: int, host_stdin: int,
              cpus: float) -> Step:
    """Run `argv` as the candidate's uid in `cwd` and wait for it (and for everything it started)."""
    step = Step()
    in_r, in_w = os.pipe() if stdin_data else (os.open("/dev/null", os.O_RDONLY), -1)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    oom_before = process.oom_kills()
    cpu_before = process.cgroup_cpu_s()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(argv, cwd, env, cpu_s, memory_bytes, file_bytes, {0: in_r, 1: out_w, 2: err_w})
    for fd in (in_r, out_w, err_w):
        os.close(fd)
    step.stdout, step.stderr = Capture(out_limit), Capture(err_limit)
    captures = {out_r: step.stdout, err_r: step.stderr}
    poller = select.poll()
    for fd in captures:
        poller.register(fd, select.POLLIN | select.POLLHUP)
    pending = memoryview(stdin_data) if stdin_data else None
    if in_w >= 0:
        os.set_blocking(in_w, False)
        poller.register(in_w, select.POLLOUT)
    poller.register(host_stdin, select.POLLIN | select.POLLHUP)
    pidfd = os.pidfd_open(pid)
    poller.register(pidfd, select.POLLIN)
    open_fds = set(captures)
    usage = None
    status: int | None = None
    try:
        while status is None:
            elapsed = time.monotonic() - started
            used = tree_cpu(cpu_before)
            if used is not None and used > cpu_s + TREE_CPU_SLACK_S:
                step.tree_cpu_timeout = True
                break
            if elapsed >= wall_s:
                step.wall_timeout = True
                break
            budget_s = (cpu_s + TREE_CPU_SLACK_S - (used or 0.0)) / max(0.1, cpus)
            timeout_ms = max(5.0, min(wall_s - elapsed, budget_s + 0.005) * 1000)
            for fd, event in poller.poll(timeout_ms):
                if fd == host_stdin:
                    process.reset_uid(process.CANDIDATE_UID, wipe=False)
                    raise HostGone
                if fd == in_w:
                    done = bool(event & (select.POLLERR | select.POLLHUP))
                    if not done and pending:
                        try:
                            written = os.write(in_w, pending[:READ_CHUNK])
                            pending = pending[written:]
                        except BlockingIOError:
                            pass
                        except OSError:  # the program closed its stdin: the rest of the input is not read
                            done = True
                    if done or not pending:
                        poller.unregister(in_w)
                        os.close(in_w)
                        in_w = -1
                        pending = None
                elif fd in open_fds:
                    read_ready(fd, captures, poller, open_fds)
                elif fd == pidfd:
                    reaped, raw_status, raw_usage = os.wait4(pid, os.WNOHANG)
                    if reaped == pid:
                        status, usage = raw_status, raw_usage
    finally:
        if in_w >= 0:
            os.close(in_w)
    step.duration = time.monotonic() - started
    tree_used = tree_cpu(cpu_before)
    # Nothing the step started may outlive it.
    if status is None or process.live_processes_other_than({1, *_keep()}):
        process.reset_uid(process.CANDIDATE_UID, wipe=False)
    if status is None:
        _, status, usage = os.wait4(pid, 0)
    for fd in list(open_fds):
        drain(fd, captures[fd])
    for fd in (out_r, err_r, pidfd):
        os.close(fd)
    step.status = status
    own = (usage.ru_utime + usage.ru_stime) if usage is not None else 0.0
    step.cpu = max(tree_used, own) if tree_used is not None else own
    step.oom = oom_before >= 0 and process.oom_kills() > oom_before
    return step


_KEEP: set = set()


def _keep() -> set:
    return _KEEP


# ------------------------------------------------------------------ the compile cache


def cache_key(spec: dict) -> str:
    files = sorted((name, text) for name, text in spec["files"].items())
    # The compile limits too: a compile that fit a generous limit says nothing about a tighter one.
    limits = [spec.get("compile_time_limit_s"), spec.get("compile_memory_bytes")]
    material = json.dumps([spec.get("toolchain", ""), spec["compile"], files, limits], ensure_ascii=False)
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()


def _read_tree(root: str, max_bytes: int = MAX_CACHED_BYTES) -> list | None:
    """[(relative path, mode, bytes)] of the regular files under root (as the candidate); None if too big."""
    found, total = [], 0
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, "rb") as handle:
                data = handle.read(max_bytes + 1)
            total += len(data)
            if total > max_bytes:
                return None
            found.append((os.path.relpath(path, root), os.stat(path).st_mode & 0o777, data))
    return found


def _write_tree(root: str, files: list) -> None:
    for relative, mode, data in files:
        path = os.path.join(root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)
        os.chmod(path, mode)


def cache_store(key: str, scratch: str, max_bytes: int = MAX_CACHED_BYTES) -> bool:
    if not os.path.isdir(CACHE_ROOT):
        return False
    with process.as_uid(process.CANDIDATE_UID):
        files = _read_tree(scratch, max_bytes)
    if files is None:
        return False
    target = os.path.join(CACHE_ROOT, key)
    partial = target + ".partial"
    with process.as_uid(process.JUDGE_UID):
        for attempt in range(2):
            try:
                shutil.rmtree(partial, ignore_errors=True)
                os.mkdir(partial, 0o755)
                _write_tree(partial, [(r, (m & 0o111) | 0o644, d) for r, m, d in files])
                for directory, _, _ in os.walk(partial):
                    os.chmod(directory, 0o755)
                os.rename(partial, target)
                return True
            except OSError:
                shutil.rmtree(partial, ignore_errors=True)
                if attempt == 0:  # full: start the cache afresh
                    for entry in os.listdir(CACHE_ROOT):
                        shutil.rmtree(os.path.join(CACHE_ROOT, entry), ignore_errors=True)
    return False


def cache_fetch(key: str, scratch: str) -> bool:
    source = os.path.join(CACHE_ROOT, key)
    if not os.path.isdir(source):
        return False
    with process.as_uid(process.JUDGE_UID):
        files = _read_tree(source)
    if files is None:
        return False
    with process.as_uid(process.CANDIDATE_UID):
        _write_tree(scratch, files)
    return True


# ------------------------------------------------------------------ precompiled headers


def pch_split(spec: dict) -> tuple[str, str, str] | None:
    """(key, header text, the source with the header's lines blank) for a job with `pch`, else None."""
    pch = spec.get("pch")
    if not pch or not pch.get("lines"):
        return None
    lines = spec["files"][pch["file"]].split("\n")
    picked = sorted(set(int(index) for index in pch["lines"]))
    if picked[-1] >= len(lines):
        return None
    header = "".join(lines[index] + "\n" for index in picked)
    for index in picked:
        lines[index] = ""
    limits = [spec.get("compile_time_limit_s"), spec.get("compile_memory_bytes")]
    return pch_key(spec.get("toolchain", ""), pch["build"], limits, header), header, "\n".join(lines)


def prepare_pch(spec: dict, scratch: str, build_dir: str, run_step) -> tuple[str | None, Step | None]:
    """Rewrite the job's source to include its precompiled header; returns (how: "prebuilt" | "hit" | "built" |
    None, the build's Step if one ran). Without a usable header the source is left as it came."""
    split = pch_split(spec)
    if split is None or not os.path.isdir(CACHE_ROOT):
        return None, None
    key, header, body = split
    prebuilt = os.path.join(PREBUILT_ROOT, key)
    entry = os.path.join(CACHE_ROOT, key)
    how, step = "hit", None
    if os.path.isfile(os.path.join(prebuilt, PCH_HEADER + ".gch")):
        how, entry = "prebuilt", prebuilt
        stats["pch_prebuilt"] += 1
    elif key in _PCH_REFUSED:
        return None, None
    elif not os.path.isfile(os.path.join(entry, PCH_HEADER + ".gch")):
        how = "built"
        # A fresh directory holding nothing but the header: the build sees only the header's own text.
        with process.as_uid(process.CANDIDATE_UID):
            os.mkdir(build_dir, 0o700)
            with open(os.path.join(build_dir, PCH_HEADER), "w", encoding="utf-8", errors="surrogatepass") as handle:
                handle.write(header)
        try:
            step = run_step(list(spec["pch"]["build"]), build_dir)
            built = (_compile_verdict(step, float(spec.get("compile_time_limit_s") or 10.0)) is None
                     and cache_store(key, build_dir, int(spec["pch"].get("max_bytes") or MAX_CACHED_BYTES)))
        finally:
            process.remove_as(process.CANDIDATE_UID, build_dir)
        if not built or not os.path.isfile(os.path.join(entry, PCH_HEADER + ".gch")):
            if not step.wall_timeout:  # a wall timeout may only measure the load: the next program tries again
                _PCH_REFUSED.add(key)
            return None, step
        stats["pch_builds"] += 1
    else:
        stats["pch_hits"] += 1
    name = spec["pch"]["file"]
    text = f'#include "{entry}/{PCH_HEADER}"\n#line 1 "{name}"\n' + body
    with process.as_uid(process.CANDIDATE_UID):
        with open(os.path.join(scratch, name), "w", encoding="utf-8", errors="surrogatepass") as handle:
            handle.write(text)
    return how, step


# ------------------------------------------------------------------ the job


def _env(scratch: str, spec: dict, extra: dict | None = None) -> dict:
    env = {"HOME": scratch, "TMPDIR": scratch, "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
    env.update(spec.get("env") or {})
    env.update(extra or {})
    return env


def _first_line(text: str, limit: int = 1500) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "..."


def _run_verdict(step: Step, limit_s: float, spec: dict, token: str | None, label: str = "") -> dict:
    """How a run (the tests, or one stdio case) ended."""
    prefix = f"{label}: " if label else ""
    base = {"exit_code": step.exit_code if step.exit_code >= 0 else None, "signal": step.signum}
    if step.wall_timeout:
        return {**base, "verdict": "timeout", "timeout_kind": "wall",
                "detail": f"{prefix}wall-clock limit exceeded (CPU limit {limit_s:g} s)"}
    if step.cpu_timeout(limit_s):
        return {**base, "verdict": "timeout", "timeout_kind": "cpu",
                "detail": f"{prefix}CPU time limit of {limit_s:g} s exceeded"}
    if step.oom:
        return {**base, "verdict": "memory", "detail": f"{prefix}memory limit exceeded"}
    stderr = step.stderr.text() if step.stderr else ""
    if step.exit_code != 0:
        for pattern, verdict in spec.get("stderr_verdicts") or ():
            found = re.search(pattern, stderr)
            if found:
                line_start = stderr.rfind("\n", 0, found.start()) + 1
                line_end = stderr.find("\n", found.end())
                line = stderr[line_start: line_end if line_end >= 0 else len(stderr)]
                return {**base, "verdict": verdict, "detail": prefix + _first_line(line, 500)}
        if step.signum is not None:
            return {**base, "verdict": "crashed", "detail": f"{prefix}killed by signal {process.signal_name(step.signum)}"}
        detail = f"{prefix}exited with status {step.exit_code}"
        if stderr.strip():
            detail += ": " + _first_line(stderr, 500)
        return {**base, "verdict": "failed" if token else "error", "detail": detail}
    if token is not None:
        tail = bytes(step.stdout.tail).decode("utf-8", "replace").rstrip()
        if tail.rpartition("\n")[2].strip() != token:
            return {**base, "verdict": "failed",
                    "detail": f"{prefix}the program exited with status 0 before its tests finished (no pass token)"}
    if step.cpu > limit_s:
        return {**base, "verdict": "timeout", "timeout_kind": "cpu",
                "detail": f"{prefix}CPU time {step.cpu:.2f} s exceeds the limit of {limit_s:g} s"}
    return {**base, "verdict": "passed", "detail": None}


def _strip_token(text: str, token: str) -> str:
    """The program's own output: without the token line (and the line break printed before it)."""
    for suffix in ("\n" + token + "\n", "\n" + token, token + "\n", token):
        if text.endswith(suffix):
            return text[: -len(suffix)]
    return text


def run_job(job: dict, frame: dict, sequence: int, host_stdin: int, zygote_pid: int) -> tuple[dict, str | None]:
    """Compile (or fetch from the cache) and run one native program; returns its result and a retire reason."""
    _KEEP.clear()
    _KEEP.add(zygote_pid)
    spec = job["native"]
    time_limit = float(job["time_limit_s"])
    memory = int(job["memory_bytes"])
    scratch_bytes = int(frame["scratch_bytes"])
    excerpt = int(frame["excerpt_bytes"])
    wall_factor = float(frame.get("wall_factor", 2.0))
    cpus = float(frame.get("cpus") or 1.0)
    limit_as = bool(spec.get("limit_address_space", True))
    scratch = os.path.join(process.SCRATCH_ROOT, f"n{sequence}")
    result: dict = {"type": "result", "id": job["id"], "compile_cached": None, "compile_ms": None, "pch": None}
    cpu_total = duration_total = 0.0
    stdout_text = stderr_text = ""
    out_trunc = err_trunc = False
    started = time.monotonic()
    try:
        with process.as_uid(process.CANDIDATE_UID):
            os.mkdir(scratch, 0o700)
            for name, text in spec["files"].items():
                if "/" in name or name in ("", ".", ".."):
                    raise ValueError(f"bad file name {name!r}")
                with open(os.path.join(scratch, name), "w", encoding="utf-8", errors="surrogatepass") as handle:
                    handle.write(text)
        verdict = None
        if spec.get("compile"):
            key = cache_key(spec)
            if cache_fetch(key, scratch):
                stats["compile_hits"] += 1
                result["compile_cached"] = True
                result["compile_ms"] = 0.0
            else:
                stats["compiles"] += 1
                limit = float(spec.get("compile_time_limit_s") or 10.0)

                def compile_step(argv: list, cwd: str) -> Step:
                    return exec_step(
                        argv, cwd, _env(cwd, spec), limit,
                        int(spec.get("compile_memory_bytes") or 1 << 30) if limit_as else None, scratch_bytes,
                        limit * wall_factor + 1.0, None, excerpt, 16384, host_stdin, cpus,
                    )

                how, pch_step = prepare_pch(spec, scratch, os.path.join(process.SCRATCH_ROOT, f"p{sequence}"),
                                            compile_step)
                step = compile_step(list(spec["compile"]), scratch)
                if how and "-Winvalid-pch" in step.stderr.text():
                    how = "rejected"
                    stats["pch_rejected"] += 1
                result["pch"] = how
                result["compile_cached"] = False
                compile_s = step.duration + (pch_step.duration if pch_step else 0.0)
                result["compile_ms"] = round(compile_s * 1000, 3)
                cpu_total += step.cpu + (pch_step.cpu if pch_step else 0.0)
                duration_total += compile_s
                verdict = _compile_verdict(step, limit)
                if verdict is None:
                    cache_store(key, scratch)
                else:
                    stderr_text = step.stderr.text()[:excerpt]
                    err_trunc = step.stderr.total > excerpt
        if verdict is None:
            run_argv = list(spec["run"])
            if spec.get("mode") == "stdio":
                verdict, cpu, duration, stdout_text, stderr_text, out_trunc, err_trunc = _run_cases(
                    spec, run_argv, scratch, memory if limit_as else None, scratch_bytes, wall_factor, excerpt,
                    host_stdin, cpus)
                cpu_total += cpu
                duration_total += duration
            else:
                token = secrets.token_hex(16)
                step = exec_step(
                    run_argv, scratch, _env(scratch, spec, {PASS_TOKEN_ENV: token}), time_limit,
                    memory if limit_as else None, scratch_bytes, time_limit * wall_factor + 1.0, None,
                    excerpt, excerpt, host_stdin, cpus,
                )
                cpu_total += step.cpu
                duration_total += step.duration
                verdict = _run_verdict(step, time_limit, spec, token)
                stdout_text = _strip_token(step.stdout.text(), token)
                stderr_text = step.stderr.text()
                out_trunc, err_trunc = step.stdout.truncated, step.stderr.truncated
    except HostGone:
        raise
    except OSError as exc:
        verdict = {"verdict": "sandbox_error", "detail": f"native job: {exc!r}"}
    result.update(verdict)
    result.update({
        "duration_ms": round((time.monotonic() - started) * 1000, 3),
        "cpu_ms": round(cpu_total * 1000, 3),
        "stdout": stdout_text, "stderr": stderr_text,
        "stdout_truncated": out_trunc, "stderr_truncated": err_trunc,
        "leftover_processes": False,
        **stats,
    })
    # Clean up: the scratch directory, then anything else either uid left.
    if os.path.lexists(scratch):
        try:
            process.remove_as(process.CANDIDATE_UID, scratch)
        except OSError:
            pass
    if process.scratch_entries() or process.ipc_objects():
        process.reset_uid(process.CANDIDATE_UID, wipe=True)
    process.reap(until_none_but={zygote_pid}, deadline_s=1.0)
    clean = (not process.scratch_entries() and process.ipc_objects() == 0
             and not process.live_processes_other_than({1, zygote_pid}))
    retire = None
    if result["verdict"] == "sandbox_error":
        retire = "sandbox error"
    elif not clean:
        retire = "the container could not be cleaned after the program"
    return result, retire


def _compile_verdict(step: Step, limit_s: float) -> dict | None:
    """None if the compile succeeded; else the job's verdict."""
    base = {"exit_code": step.exit_code if step.exit_code >= 0 else None, "signal": step.signum}
    if step.wall_timeout:
        # May only measure the machine's load: a wall timeout is re-run alone before it is final.
        return {**base, "verdict": "timeout", "timeout_kind": "wall",
                "detail": f"compile: wall-clock limit exceeded (compile CPU limit {limit_s:g} s)"}
    if step.cpu_timeout(limit_s):
        return {**base, "verdict": "compile_error", "detail": f"compile: CPU time limit of {limit_s:g} s exceeded"}
    if step.oom:
        return {**base, "verdict": "compile_error", "detail": "compile: memory limit exceeded"}
    if step.exit_code != 0:
        stderr = step.stderr.text()
        errors = [line for line in stderr.splitlines() if "error" in line.lower()]
        shown = "\n".join(errors[:5]) if errors else stderr
        reason = f"killed by signal {process.signal_name(step.signum)}" if step.signum else f"status {step.exit_code}"
        return {**base, "verdict": "compile_error", "detail": f"compile failed ({reason}): " + _first_line(shown, 1500)}
    return None


def _run_cases(spec: dict, argv: list, scratch: str, memory: int | None, scratch_bytes: int, wall_factor: float,
               excerpt: int, host_stdin: int, cpus: float) -> tuple:
    limit = float(spec["case_time_limit_s"])
    cases = spec["cases"]
    policy = spec.get("policy") or compare.DEFAULT_POLICY
    abs_tol = float(spec.get("abs_tol", compare.DEFAULT_ABS_TOL))
    rel_tol = float(spec.get("rel_tol", compare.DEFAULT_REL_TOL))
    cpu = duration = 0.0
    last = None
    for index, case in enumerate(cases):
        label = f"case {index + 1} of {len(cases)} (input {compare.clip(case['input'], 40)})"
        step = exec_step(argv, scratch, _env(scratch, spec), limit, memory, scratch_bytes,
                         limit * wall_factor + 1.0, case["input"].encode("utf-8"), STDIO_OUTPUT_CAP, excerpt,
                         host_stdin, cpus)
        cpu += step.cpu
        duration += step.duration
        last = step
        verdict = _run_verdict(step, limit, spec, None, label)
        if verdict["verdict"] == "passed":
            got = step.stdout.text()
            if step.stdout.truncated:
                verdict = {**verdict, "verdict": "failed", "detail": f"{label}: output too large"}
            else:
                mismatch = compare.output_mismatch(got, case["output"], policy, abs_tol, rel_tol)
                if mismatch is not None:
                    verdict = {**verdict, "verdict": "failed", "detail": f"{label}: {mismatch}"}
        if verdict["verdict"] != "passed":
            break
    out = last.stdout.text()[:excerpt] if last else ""
    err = last.stderr.text() if last else ""
    return (verdict, cpu, duration, out, err, bool(last and last.stdout.total > excerpt),
            bool(last and last.stderr.truncated))
