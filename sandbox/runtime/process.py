"""Process plumbing shared by PID 1 and its helpers (the zygote, the judge template): identities, limits, clean-up,
cgroup figures, forks.

Identities. The container starts as root holding only CAP_SETUID, CAP_SETGID
and CAP_SETPCAP (container.py). PID 1 and its helpers keep them; every other
process drops to one of two uids for good, with an empty bounding set:

- JUDGE_UID (10002) runs passk's judges and the problem's own tests;
- CANDIDATE_UID (10001) runs the model's code.

Different uids mean a candidate cannot ptrace, signal or open /proc/<pid>/fd
or /proc/<pid>/mem of a judge (and judges are non-dumpable as well).

Clean-up. Without CAP_KILL or CAP_FOWNER, root cannot kill or delete what the
two uids own; with the uid as its effective uid for a moment, it can.
`reset_uid` kills every process of that uid (stopping them first, so that a
fork bomb cannot outrun it), then removes its System V IPC objects, POSIX
message queues and files in the scratch places.
"""

import contextlib
import ctypes
import os
import signal
import socket
import stat
import time
import typing

CANDIDATE_UID = 10001
JUDGE_UID = 10002
SCRATCH_ROOT = "/tmp"
# Places programs may write to, wiped after every program.
SCRATCH_PLACES = ("/tmp", "/dev/shm", "/dev/mqueue")
SYSV_TABLES = ("/proc/sysvipc/shm", "/proc/sysvipc/sem", "/proc/sysvipc/msg")

_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_CHILD_SUBREAPER = 36
_IPC_RMID = 0
_CAP_LAST = 63

_libc = ctypes.CDLL("libc.so.6", use_errno=True)
_CLONE_PARENT = 0x00008000
_SYS_CLONE = {"x86_64": 56, "aarch64": 220}.get(os.uname().machine)
# fork_sibling's arguments (every one but the flags is 0, as fork's; longs, since syscall() is variadic) and
# the interpreter's own steps around a fork, looked up once: the judge template calls it once per judge, and
# every page it touches after a fork is a page fault.
_CLONE_ARGS = (ctypes.c_long(_SYS_CLONE or -1), ctypes.c_long(_CLONE_PARENT | signal.SIGCHLD), *[ctypes.c_long(0)] * 4)
_before_fork = ctypes.pythonapi.PyOS_BeforeFork
_after_fork_child = ctypes.pythonapi.PyOS_AfterFork_Child
_after_fork_parent = ctypes.pythonapi.PyOS_AfterFork_Parent


def prctl(option: int, value: int) -> None:
    if _libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}, {value}) failed")


def fork_sibling() -> int:
    """os.fork, except that the child is our parent's child (clone with CLONE_PARENT): the parent waits for it
    and reads its status and rusage as for a child it forked itself. The interpreter's own steps around a fork
    run as os.fork runs them. Returns 0 in the child, the child's pid in this process."""
    if _SYS_CLONE is None:
        raise OSError(38, f"no clone system call known for {os.uname().machine}")
    _before_fork()
    pid = _libc.syscall(*_CLONE_ARGS)
    if pid == 0:
        _after_fork_child()
        return 0
    error = ctypes.get_errno()
    _after_fork_parent()
    if pid < 0:
        raise OSError(error, f"clone failed: {os.strerror(error)}")
    return pid


def start_helper(name: str, control_child: socket.socket, control_parent: socket.socket,
                 serve: typing.Callable[[socket.socket], None]) -> int:
    """Fork one of PID 1's helpers (the zygote, the judge template; PID 1 calls this before it reads any job):
    non-dumpable, with /dev/null for its standard descriptors (PID 1's stdin and stdout are the host's channel,
    which nothing forked from a helper may inherit), running `serve(control_child)` until it returns. A failure
    is reported on the container's stderr. Returns its pid."""
    pid = os.fork()
    if pid == 0:
        log = os.dup(2)  # the container's stderr, for the helper's own crash report only
        try:
            control_parent.close()
            make_non_dumpable()
            devnull = os.open("/dev/null", os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.close(devnull)
            serve(control_child)
        except BaseException:
            import traceback

            os.write(log, f"passk {name}: {traceback.format_exc()}".encode("utf-8", "replace"))
        finally:
            os._exit(0)
    control_child.close()
    return pid


def make_non_dumpable() -> None:
    prctl(_PR_SET_DUMPABLE, 0)


def make_dumpable() -> None:
    """As an exec'd program of the uid is (its /proc/self/fd readable to itself): for a candidate that runs a
    program as the interpreter would (script.py), whose memory came from the zygote and holds nothing of a job."""
    prctl(_PR_SET_DUMPABLE, 1)


def become_subreaper() -> None:
    prctl(_PR_SET_CHILD_SUBREAPER, 1)


# True once this process's capability bounding set is known to be empty (inherited by every fork).
_bounding_set_empty = False


def drop_bounding_set() -> None:
    """Empty the capability bounding set, for this process and everything it forks from now on.

    PID 1 does it at start (it never execs, and keeps its permitted CAP_SETUID/SETGID/SETPCAP): every judge
    and candidate is then forked with an empty bounding set, and `drop_to` need not drop it again per process.
    """
    global _bounding_set_empty
    _drop_bounding_caps()
    _bounding_set_empty = bounding_set() == 0


def _drop_bounding_caps() -> None:
    for cap in range(_CAP_LAST + 1):
        _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the kernel's last cap: ignored


def bounding_set() -> "int | None":
    """This process's capability bounding set (CapBnd of /proc/self/status), None if unreadable."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("CapBnd:"):
                    return int(line.split()[1], 16)
    except (OSError, ValueError, IndexError):
        pass
    return None


def drop_to(uid: int) -> None:
    """Become `uid` (and its group) for good: no supplementary groups, no capabilities, not dumpable."""
    if not _bounding_set_empty:  # else inherited empty (drop_bounding_set): nothing can refill it
        _drop_bounding_caps()
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    make_non_dumpable()


def kill_uid(uid: int) -> bool:
    """With `uid` as effective uid: SIGKILL every process of the uid. True if there were any.

    Not kill(-1): our real uid stays root's, and kill(-1) would also reach every root process (the
    zygote). So: SIGSTOP all of them (a stopped process forks no more), then SIGKILL, pass after pass
    until a scan of /proc finds none; a fork bomb is bounded by the pids limit, so this ends quickly.
    """
    found = False
    for _ in range(100):
        pids = [pid for pid in processes_other_than({1, os.getpid()}) if real_uid(pid) == uid]
        if not pids:
            return found
        found = True
        for signum in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, signum)
                except OSError:
                    pass
        time.sleep(0.0002)
    return found


def real_uid(pid: int) -> "int | None":
    """The real uid of a live process (from /proc/<pid>/status, readable even for non-dumpable ones);
    None for a zombie (already dead, waiting to be reaped) or a process that is gone."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            uid = None
            for line in handle:
                if line.startswith("State:") and line.split()[1] in ("Z", "X"):
                    return None
                if line.startswith("Uid:"):
                    uid = int(line.split()[1])
                    break
            return uid
    except (OSError, ValueError, IndexError):
        return None


def remove_ipc(uid: int) -> None:
    """Remove the System V segments, semaphore sets and message queues owned or created by `uid`."""
    calls = {
        "/proc/sysvipc/shm": lambda ident: _libc.shmctl(ident, _IPC_RMID, None),
        "/proc/sysvipc/sem": lambda ident: _libc.semctl(ident, 0, _IPC_RMID),
        "/proc/sysvipc/msg": lambda ident: _libc.msgctl(ident, _IPC_RMID, None),
    }
    for table, remove in calls.items():
        for ident, owners in _sysv_entries(table):
            if uid in owners:
                remove(ident)


def _sysv_entries(table: str) -> list:
    """(id, {uid, cuid}) per object of a /proc/sysvipc table."""
    try:
        fd = os.open(table, os.O_RDONLY)
    except OSError:
        return []
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        lines = b"".join(chunks).decode().splitlines()
    except OSError:
        return []
    finally:
        os.close(fd)
    if not lines:
        return []
    header = lines[0].split()
    try:
        id_col = 1
        uid_col, cuid_col = header.index("uid"), header.index("cuid")
    except ValueError:
        return []
    entries = []
    for line in lines[1:]:
        fields = line.split()
        if len(fields) > max(uid_col, cuid_col):
            entries.append((int(fields[id_col]), {int(fields[uid_col]), int(fields[cuid_col])}))
    return entries


def ipc_objects() -> int:
    """How many System V IPC objects exist in the container's IPC namespace."""
    return sum(len(_sysv_entries(table)) for table in SYSV_TABLES)


def wipe_owned(uid: int) -> None:
    """Delete what `uid` owns in the scratch places (run as that uid)."""
    for place, entry in scratch_entries():
        path = os.path.join(place, entry)
        try:
            if os.lstat(path).st_uid == uid:
                remove_tree(path)
        except OSError:
            pass


def remove_tree(path: str) -> None:
    """Remove a file or a whole directory tree, however deep, never following a symbolic link.

    Iterative and relative: the walk goes down with chdir into one entry at a time, so neither Python's
    recursion limit nor PATH_MAX stops it (a program may leave a tree thousands of levels deep), and it opens
    no descriptor per level. Run with the owner's uid as the effective uid: an entry the program took its
    own permissions from is given them back first (the owner may always chmod it)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(path)
        return
    try:
        os.rmdir(path)  # the usual case: the program left its scratch directory empty
        return
    except OSError:
        pass
    home = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        parent, name = os.path.split(os.path.abspath(path))
        os.chdir(parent)
        _remove_tree_here(name)
    finally:
        os.fchdir(home)
        os.close(home)


def _remove_tree_here(top: str) -> None:
    """Remove the directory `top` of the current directory with everything under it (see _remove)."""
    # Each level: its name and the names of its subdirectories still to remove.
    stack: list[tuple[str, list[str]]] = [(top, _enter_and_empty(top))]
    while stack:
        _, pending = stack[-1]
        if pending:
            child = pending.pop()
            stack.append((child, _enter_and_empty(child)))
            continue
        name, _ = stack.pop()
        os.chdir("..")
        os.rmdir(name)


def _enter_and_empty(name: str) -> list[str]:
    """chdir into the directory `name`, remove what is not a directory in it, return its subdirectories."""
    try:
        os.chdir(name)
    except PermissionError:
        os.chmod(name, 0o700, follow_symlinks=False)
        os.chdir(name)
    if not os.access(".", os.R_OK | os.W_OK | os.X_OK):
        os.chmod(".", 0o700)
    subdirectories = []
    with os.scandir(".") as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                subdirectories.append(entry.name)
            else:
                os.unlink(entry.name)
    return subdirectories


def reset_uid(uid: int, wipe: bool) -> bool:
    """Kill every process of `uid` (and with `wipe`, remove its IPC objects and files). True if any lived.

    Done in this process with `uid` as the effective uid for a moment, not in a forked helper: a program
    that exhausted the pids limit leaves no room for a fork, and this is what frees it. The real and
    saved uids stay root's, so no process of `uid` can signal us meanwhile, and the effective uid (and
    the capabilities with it) comes back at the end.
    """
    with as_uid(uid):
        alive = kill_uid(uid)
        if wipe:
            remove_ipc(uid)
            wipe_owned(uid)
    return alive


def reap(until_none_but: "set | None" = None, deadline_s: float = 0.0) -> list:
    """Reap dead children without blocking; with `until_none_but`, keep going (up to `deadline_s`)
    until every child but those pids is gone. Returns [(pid, status, rusage)] of those reaped."""
    reaped = []
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid:
            reaped.append((pid, status, usage))
            continue
        if until_none_but is None or time.monotonic() >= deadline or not _other_children(until_none_but):
            return reaped
        time.sleep(0.0005)


def _other_children(keep: set) -> bool:
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in keep or entry == me:
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:  # ppid
            return True
    return False


def processes_other_than(keep: set) -> list:
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit() and int(entry) not in keep]


def live_processes_other_than(keep: set) -> list:
    """Processes not in `keep` that have not ended (zombies waiting to be reaped do not count)."""
    return [pid for pid in processes_other_than(keep) if real_uid(pid) is not None]


def process_cpu(pid: int, children: bool = False) -> float:
    """CPU seconds of a live process (all its threads), from /proc/<pid>/stat; with `children`, also what its
    reaped children used. 0.0 for a process that is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        ticks = sum(int(field) for field in fields[11:15 if children else 13])  # utime stime [cutime cstime]
    except (OSError, ValueError, IndexError):
        return 0.0
    return ticks / os.sysconf("SC_CLK_TCK")


def uid_cpu_s(uid: int) -> float:
    """CPU seconds of the live processes of `uid`, each with what its reaped children used: what a step
    started has gained, without the supervisor's own work (the container's cgroup counts that too)."""
    return sum(process_cpu(pid, children=True) for pid in processes_other_than({1, os.getpid()})
               if real_uid(pid) == uid)


def scratch_entries() -> list:
    """(place, entry) for everything in the scratch places."""
    found = []
    for place in SCRATCH_PLACES:
        try:
            found += [(place, entry) for entry in os.listdir(place)]
        except OSError:
            continue
    return found


def remove_as(uid: int, path: str) -> None:
    """Remove a scratch directory `uid` made, with `uid` as effective uid for the moment."""
    with as_uid(uid):
        remove_tree(path)


@contextlib.contextmanager
def as_uid(uid: int) -> "typing.Iterator[None]":
    """`uid` as the effective uid for the block. The real and saved uids stay root's, so no process of
    `uid` can signal us meanwhile; the effective uid (and the capabilities with it) comes back after."""
    os.setresuid(-1, uid, -1)
    try:
        yield
    finally:
        os.setresuid(-1, 0, -1)


def cpu_rlimit_s(cpu_s: float) -> int:
    """RLIMIT_CPU's soft limit for a CPU limit of `cpu_s`: whole seconds, at least one."""
    import math

    return max(1, math.ceil(cpu_s))


def set_limits(cpu_s: float, memory_bytes: int, file_bytes: int, cpu_hard_s: int | None = None) -> None:
    import resource

    cpu = cpu_rlimit_s(cpu_s)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1 if cpu_hard_s is None else cpu_hard_s))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def oom_score(value: int) -> None:
    try:
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
    except OSError:
        return
    try:
        os.write(fd, str(value).encode())
    except OSError:
        pass
    finally:
        os.close(fd)


# Every program's environment: these, with HOME and TMPDIR its scratch directory.
BASE_ENVIRONMENT = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
# True once this process's environment holds exactly HOME, TMPDIR and BASE_ENVIRONMENT (inherited by every fork).
_environment_reset = False


def reset_environment() -> None:
    """Reduce this process's environment to a program's, for it and everything it forks from now on.

    PID 1 does it at start: a judge or candidate forked after it then only names its own scratch directory
    (`clean_environment`), without clearing the whole mapping again, which touched enough of the inherited
    heap to cost it about 60 copy-on-write page faults per process.
    """
    global _environment_reset
    os.environ.clear()
    os.environ.update({"HOME": "/", "TMPDIR": "/tmp", **BASE_ENVIRONMENT})
    _environment_reset = True


def clean_environment(home: str) -> None:
    """The program's environment: BASE_ENVIRONMENT, with HOME and TMPDIR set to `home`, and nothing else."""
    if not _environment_reset:
        os.environ.clear()
        os.environ.update(BASE_ENVIRONMENT)
    os.environ["HOME"] = home
    os.environ["TMPDIR"] = home


def signal_name(signum: int) -> str:
    """A name for any signal number, including real-time ones Python has no member for."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        low, high = getattr(signal, "SIGRTMIN", 34), getattr(signal, "SIGRTMAX", 64)
        if low <= signum <= high:
            return f"SIGRTMIN+{signum - low}"
        return f"signal {signum}"


# ------------------------------------------------------------- cgroup figures


_CPU_FILES = ("/sys/fs/cgroup/cpuacct/cpuacct.usage", "/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage")
_OOM_FILES = (("/sys/fs/cgroup/memory.events", "oom_kill"), ("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill"))


# One open descriptor per cgroup file, read with pread: the supervisor reads them several times per program.
_open_files: dict = {}


def _read_cgroup_file(path: str) -> str:
    """The text of a cgroup file, through a descriptor kept open by this process (forks open their own)."""
    pid = os.getpid()
    cached = _open_files.get(path)
    if cached is None or cached[0] != pid:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        _open_files[path] = cached = (pid, fd)
    return os.pread(cached[1], 4096, 0).decode()


def cgroup_cpu_s() -> "float | None":
    """CPU seconds used by every process the container ever ran (cgroup v1 or v2), or None."""
    for path in _CPU_FILES:
        try:
            return int(_read_cgroup_file(path)) / 1e9
        except (OSError, ValueError):
            continue
    try:
        for line in _read_cgroup_file("/sys/fs/cgroup/cpu.stat").splitlines():
            name, _, value = line.partition(" ")
            if name == "usage_usec":
                return int(value) / 1e6
    except (OSError, ValueError):
        pass
    return None


def oom_kills() -> int:
    """The container cgroup's OOM-kill counter (cgroup v2 or v1), or -1 if unreadable."""
    for path, key in _OOM_FILES:
        try:
            for line in _read_cgroup_file(path).splitlines():
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
        except (OSError, ValueError):
            continue
    return -1
