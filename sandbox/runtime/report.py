"""What a judge tells PID 1 on its private report channel, and the reward-hack flags.

A judge (Python: supervisor.harness around trusted_tests.py and driver.py; another language: its judge
runtime in sandbox/languages/<name>/) writes on descriptor 3, which no candidate process ever holds:

    FLAG <name>\\n          zero or more, as the judge notices them (names: FLAGS below)
    <KIND>[ <text>]         exactly one, last: how the tests ended (the text may span lines)

KIND (the verdict PID 1 gives, with the judge's exit status and the limits):

- PASS: every test ran and passed (with exit status 0). Only a judge writes it, and no candidate process
  holds the channel, so printing, exiting or signalling cannot produce it.
- FAILED: an assertion of the tests failed. ERROR: another exception. MEMORY: out of memory.
- EXITED (Python): the candidate ended the tests with SystemExit. KILLED <signal number> (Python): the
  candidate was killed by that signal.
- ENDED (other languages): the candidate's process ended while the tests still needed it; PID 1 decides from
  how it ended (its signal, exit status and its own stderr), as if the tests and the candidate were one
  process. Ending with status 0 there also raises the flag `ended_early`.
- RAISED <class>: <message> (other languages): a call into the candidate threw or panicked; the tests end
  there (`memory` for an out-of-memory class, `failed` for an assertion, else `error`).
- BROKEN <text> (other languages): the candidate's process sent something that is not an answer to the call
  (garbled, or unasked): `failed`, flagged `out_of_turn`.
- SETUP <text>: passk's own set-up failed before any of the program's code ran: `sandbox_error`.

The flags are what only a forger does; each sample carries those its program raised, and runs count them.
"""

from __future__ import annotations

import os
from typing import NoReturn

# name -> what the program did (shown in the API, the dashboard and the CLI).
FLAGS = {
    "ended_early": "ended with status 0 before its tests finished",
    "out_of_turn": "wrote on the judge's channel out of turn",
    "reached_judge": "tried to read, signal or trace the judge",
}

# The report channel's descriptor in a judge.
FD = 3
# The exit status that goes with SETUP: only with it is a SETUP report PID 1's sandbox_error.
SETUP_STATUS = 120
KINDS = ("PASS", "FAILED", "ERROR", "MEMORY", "EXITED", "KILLED", "ENDED", "RAISED", "BROKEN", "SETUP")
FLAG = b"FLAG "
# Out-of-memory errors, by the class a judge reports a candidate raising (RAISED `<class>: <message>`).
MEMORY_CLASSES = ("MemoryError", "std::bad_alloc", "java.lang.OutOfMemoryError", "OutOfMemoryError",
                  "System.OutOfMemoryException", "core.exception.OutOfMemoryError", "Out_of_memory", "HeapOverflow")
# Assertion errors: a candidate's own failed assertion fails the sample, as it does in one process.
ASSERTION_CLASSES = ("AssertionError", "java.lang.AssertionError", "core.exception.AssertError", "Assert_failure")


# In a judge's process: the flags it noted so far (its report starts with them).
NOTED: list[str] = []


def note(name: str) -> None:
    if name in FLAGS and name not in NOTED:
        NOTED.append(name)


def setup_failed(fd: int, exc: BaseException) -> NoReturn:
    """passk's own set-up failed before any of the program's code ran: SETUP on the report at `fd`, and exit with
    SETUP_STATUS."""
    os.write(fd, b"SETUP " + repr(exc).encode()[:500])
    os._exit(SETUP_STATUS)


def flag_line(name: str) -> bytes:
    return FLAG + name.encode() + b"\n"


def parse(data: bytes) -> tuple[list[str], bytes, bytes]:
    """(the known flags, in order and once each; the outcome's KIND; its text) of what a judge wrote."""
    flags: list[str] = []
    while data.startswith(FLAG):
        line, _, data = data.partition(b"\n")
        name = line[len(FLAG):].decode("ascii", "replace").strip()
        if name in FLAGS and name not in flags:
            flags.append(name)
    kind, _, text = data.partition(b" ")
    return flags, kind.strip(), text


def raised_verdict(text: str) -> str:
    """The verdict of a call that raised `<class>: <message>` in the candidate (a panic's class is "panic")."""
    name, _, message = text.partition(": ")
    name = name.strip()
    if name in MEMORY_CLASSES or (name == "panic" and message.startswith("memory allocation")):
        return "memory"
    if name in ASSERTION_CLASSES or (name == "panic" and message.startswith("assertion")):
        return "failed"
    return "error"
