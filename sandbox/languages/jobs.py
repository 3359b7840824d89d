"""What the supervisor needs of a language to run one program (the `native` part of a sandbox Job).

The host builds it from the language module (sandbox/languages/<name>.py) and the program; the
supervisor (sandbox/runtime/native.py) receives it with the job. See native.py for the fields.
"""

from __future__ import annotations

from typing import Any

from sandbox.languages.base import Language


def _common(language: Language, toolchain: str, memory_bytes: int, compile_time_limit_s: float | None,
            compile_memory_bytes: int | None) -> dict[str, Any]:
    return {
        "language": language.name,
        "compile": list(language.compile) if language.compile else None,
        "run": list(language.run_argv(memory_bytes)),
        "compile_time_limit_s": compile_time_limit_s or language.compile_time_limit_s,
        "compile_memory_bytes": compile_memory_bytes or language.compile_memory_bytes,
        "toolchain": toolchain,
        "limit_address_space": language.limit_address_space,
        "pids": language.pids,
        "env": dict(language.extra.get("env", {})),
        "stderr_verdicts": [list(pair) for pair in language.stderr_verdicts],
    }


def _files(language: Language, text: str) -> dict[str, Any]:
    """The source file, and which of its lines are precompiled as its header (if the language does that)."""
    spec: dict[str, Any] = {"files": {language.source_file: text}}
    if language.header_lines is not None:
        lines = language.header_lines(text)
        if lines:
            spec["pch"] = {"file": language.source_file, "lines": lines, "build": list(language.precompile),
                           "max_bytes": PCH_MAX_BYTES}
    if language.compile_cache_bytes:
        spec["cache_bytes"] = language.compile_cache_bytes
    return spec


# A bigger precompiled header (<bits/stdc++.h>: ~100 MB) is not kept: the program compiles without one.
PCH_MAX_BYTES = 48 * 1024 * 1024


def tests_spec(language: Language, program_text: str, toolchain: str, memory_bytes: int,
               compile_time_limit_s: float | None = None, compile_memory_bytes: int | None = None) -> dict[str, Any]:
    """A self-checking program (HumanEval-X, MultiPL-E): passes with exit 0 and the pass token printed last."""
    return {
        **_common(language, toolchain, memory_bytes, compile_time_limit_s, compile_memory_bytes),
        "mode": "tests",
        **_files(language, language.tests_program(program_text)),
    }


def stdio_spec(language: Language, source: str, cases: list[dict[str, str]], case_time_limit_s: float,
               policy: str, abs_tol: float, rel_tol: float, toolchain: str, memory_bytes: int,
               compile_time_limit_s: float | None = None, compile_memory_bytes: int | None = None) -> dict[str, Any]:
    """A stdin/stdout solution: compiled once, then run once per case; each output compared (compare.py)."""
    return {
        **_common(language, toolchain, memory_bytes, compile_time_limit_s, compile_memory_bytes),
        "mode": "stdio",
        **_files(language, language.stdio_program(source)),
        "cases": [{"input": case["input"], "output": case["output"]} for case in cases],
        "case_time_limit_s": case_time_limit_s,
        "policy": policy,
        "abs_tol": abs_tol,
        "rel_tol": rel_tol,
    }
