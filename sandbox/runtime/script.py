"""`python3 FILE ARGS`, in a process the zygote forked: the program runs as a fresh interpreter would run it, without
the interpreter's start (about 10 ms of CPU, most of a short program's cost).

Used for POST /run_code's Python programs (job.Native.warm). The zygote never held a job (zygote.py), so the
process has nothing of anyone else's to find. What a program sees is what `python3 FILE` gives it:

- `sys.argv` (FILE first), `sys.orig_argv`, `sys.path` (FILE's directory first, then the interpreter's own
  entries, without passk's), a fresh `__main__` module with the same names in the same order, `__file__` absolute;
- standard streams built as the interpreter builds them (UTF-8; surrogateescape on stdin and stdout and
  backslashreplace on stderr, as under the C.UTF-8 locale; stdout block-buffered, stderr line-buffered), closed
  descriptors as it would find them;
- signal dispositions (SIGINT raises KeyboardInterrupt, SIGPIPE and SIGXFSZ ignored), a freshly seeded `random`,
  and a dumpable process (its own /proc/self/fd readable), as after exec;
- the same ending: an uncaught exception's traceback (without passk's frames) and status 1, SystemExit's status or
  message, KeyboardInterrupt's death by SIGINT, non-daemon threads joined, atexit callbacks run, and status 120 if
  stdout cannot be flushed at exit.

What differs, and cannot be hidden in a forked interpreter: `sys.flags` (isolated, as the sandbox's interpreter
was started), the string hash seed (shared with the zygote, so the iteration order of a set of strings is the
same from one program to the next, one valid order of Python's), and the modules already imported (`sys.modules`
holds the runtime's; importing them again costs nothing).
"""

import _signal
import atexit
import builtins
import io
import os
import sys
import traceback
from importlib.machinery import SourceFileLoader

from . import process

# The entries of sys.path that are passk's (the runtime's own package), not the interpreter's.
_RUNTIME_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(argv: list, env: dict) -> None:
    """Run `argv[0]` (a path, relative to the working directory) with `argv[1:]` as its arguments and `env` as its
    environment; never returns. Descriptors 0, 1 and 2 are the program's; every other one is closed first."""
    try:
        os.closerange(3, 1 << 16)
        process.make_dumpable()
        if dict(os.environ) != env:
            os.environ.clear()
            os.environ.update(env)
        path = os.path.abspath(argv[0])
        namespace = _prepare(list(argv), path)
        with open(path, "rb") as handle:
            source = handle.read()
    except BaseException as exc:  # ours: before any of the program's code ran
        try:
            os.write(2, f"passk: could not start the program: {exc!r}\n".encode())
        finally:
            os._exit(121)
    status, interrupted = 0, False
    try:
        # dont_inherit: none of this module's compiler flags (its __future__ imports) reach the program.
        code = compile(source, path, "exec", dont_inherit=True)
        exec(code, namespace)
    except SystemExit as exc:
        status = _exit_status(exc)
    except BaseException as exc:
        status, interrupted = 1, _uncaught(exc)
    os._exit(_finish(status, interrupted))


def _prepare(argv: list, path: str) -> dict:
    sys.argv = argv
    sys.orig_argv = ["python3", *argv]
    sys.path[:] = [os.path.dirname(path)] + [entry for entry in sys.path
                                             if entry and os.path.abspath(entry) != _RUNTIME_ROOT]
    sys.dont_write_bytecode = False
    sys.stdin = sys.__stdin__ = _stream(0, "r")
    sys.stdout = sys.__stdout__ = _stream(1, "w")
    sys.stderr = sys.__stderr__ = _stream(2, "w")
    _signal.signal(_signal.SIGINT, _signal.default_int_handler)
    _signal.signal(_signal.SIGPIPE, _signal.SIG_IGN)
    _signal.signal(_signal.SIGXFSZ, _signal.SIG_IGN)
    atexit._clear()  # only the program's own callbacks run at its exit
    if "random" in sys.modules:  # the runtime never loads it; if the zygote ever held it, seeded there, once
        sys.modules["random"].seed()
    main = type(sys)("__main__")
    namespace = main.__dict__
    # In the order the interpreter sets them (a program may print globals()).
    namespace.update({
        "__name__": "__main__", "__doc__": None, "__package__": None,
        "__loader__": SourceFileLoader("__main__", path), "__spec__": None, "__annotations__": {},
        "__builtins__": builtins, "__file__": path, "__cached__": None,
    })
    sys.modules["__main__"] = main
    return namespace


def _stream(fd: int, mode: str) -> io.TextIOWrapper:
    """A standard stream as the interpreter makes it at start (Python/pylifecycle.c: create_stdio)."""
    raw = io.FileIO(fd, mode + "b", closefd=False)
    raw.name = {0: "<stdin>", 1: "<stdout>", 2: "<stderr>"}[fd]
    buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
    interactive = raw.isatty()
    text = io.TextIOWrapper(buffered, encoding="utf-8", errors="backslashreplace" if fd == 2 else "surrogateescape",
                            newline="\n", line_buffering=mode == "w" and (fd == 2 or interactive),
                            write_through=False)
    text.mode = mode
    return text


def _exit_status(exc: SystemExit) -> int:
    """SystemExit as the interpreter ends on it: None is 0, an int is the status, anything else is printed."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(f"{code}\n")
    except BaseException:
        pass
    return 1


def _uncaught(exc: BaseException) -> bool:
    """Print the traceback from the program's first frame on (this module's is left out), as the interpreter
    does; True for KeyboardInterrupt, which ends the process by SIGINT once the rest of the exit is done."""
    # The display follows the exception's own traceback: its first entry is run()'s frame.
    exc.__traceback__ = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
    sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, exc.__traceback__
    try:
        sys.excepthook(type(exc), exc, exc.__traceback__)
    except BaseException:
        pass
    return isinstance(exc, KeyboardInterrupt)


def _finish(status: int, interrupted: bool) -> int:
    """The interpreter's exit (Py_FinalizeEx, then Py_RunMain's status): non-daemon threads joined, atexit
    callbacks, standard streams flushed (120 if one cannot be), then death by SIGINT after a KeyboardInterrupt."""
    threading = sys.modules.get("threading")
    if threading is not None:
        try:
            threading._shutdown()
        except BaseException:
            pass
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException as exc:
            status = 120
            _unraisable(stream, exc)
    if interrupted:
        _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
        os.kill(os.getpid(), _signal.SIGINT)
    return status


def _unraisable(stream: object, exc: BaseException) -> None:
    """A stream that could not be flushed at exit, reported as the interpreter reports it (PyErr_WriteUnraisable)."""
    try:
        sys.stderr.write(f"Exception ignored in: {stream!r}\n" + "".join(traceback.format_exception_only(type(exc), exc)))
        sys.stderr.flush()
    except BaseException:
        pass
