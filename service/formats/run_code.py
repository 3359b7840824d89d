"""`run`: the problem behind POST /run_code, in every language. The sample's completion is a JSON object
{"code", "stdin", "files", "fetch_files"[, "args"]}; the program is compiled (if its language compiles) and run once on that
input (sandbox/runtime/native.py, mode `run`), and the sample records how it ended: exit status 0 passes, and its
`failure` record (kind `run_code`) holds the compile's and the run's results and the fetched files."""

from __future__ import annotations

import json
from typing import Any

from sandbox import languages
from sandbox.languages.jobs import run_spec
from service.core.settings import get_settings
from service.core.limits import limits_of
from service.formats.native import as_program, compile_limits, memory_bytes
from service.formats.program import Program
from service.formats.registry import Format, language_of


def completion_for(code: str, stdin: str, files: dict[str, str], fetch_files: list[str] | tuple[str, ...] = (),
                   args: list[str] | tuple[str, ...] = ()) -> str:
    request = {"code": code, "stdin": stdin, "files": files, "fetch_files": list(fetch_files)}
    if args:
        request["args"] = list(args)
    return json.dumps(request, sort_keys=True, ensure_ascii=False)


def program(problem: Any, completion: str) -> Program:
    request = json.loads(completion)
    language = languages.get(language_of(problem))
    settings = get_settings()
    limit = limits_of(problem).time_limit_s
    compile_s, _ = compile_limits(problem)
    spec = run_spec(language, request["code"], request.get("stdin") or "", request.get("files") or {},
                    request.get("fetch_files") or [], "", memory_bytes(problem),
                    compile_s or language.compile_time_limit_s, settings.run_code_output_bytes,
                    settings.run_code_fetch_bytes, request.get("args") or ())
    return as_program(spec, language.name, limit)


FORMAT = Format(name="run_code", program=program, languages=None, summary="the problem behind POST /run_code (not for datasets)")
