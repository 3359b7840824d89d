"""The verdicts a program can get. The sandbox decides them; the service stores and counts them."""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    PASSED = "passed"  # the test code provably ran to its end
    FAILED = "failed"  # an assertion failed, or the program stopped before the tests finished
    ERROR = "error"  # any other exception, including a syntax error
    TIMEOUT = "timeout"  # CPU or wall-clock limit
    MEMORY = "memory"  # memory cap hit
    CRASHED = "crashed"  # killed by a signal we did not send for a limit
    COMPILE_ERROR = "compile_error"  # a compiled language's program did not compile (the model's failure)
    SANDBOX_ERROR = "sandbox_error"  # our fault: retried, never counted against the model


# Verdicts that say something about the model; sandbox_error says something about us.
MODEL_VERDICTS = tuple(v for v in Verdict if v is not Verdict.SANDBOX_ERROR)
