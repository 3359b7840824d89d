"""`run`: the problem behind POST /run_code. The sample's completion is a JSON object {"code", "stdin",
"files"}; the driver runs the code once on that input (driver.py, mode `run`), its output is the
judge's output, and exit status 0 passes (anything else is an `error` with the return code)."""

from __future__ import annotations

import json
from typing import Any

from service.formats.harness import driver_program
from service.formats.limits import case_time_limit_s
from service.formats.registry import Format
from service.formats.program import Program

# Output kept for a run (the sample stores its first PASSK_OUTPUT_EXCERPT_BYTES).
RUN_OUTPUT_CAP = 1 << 20


def completion_for(code: str, stdin: str, files: dict[str, str]) -> str:
    return json.dumps({"code": code, "stdin": stdin, "files": files}, sort_keys=True, ensure_ascii=False)


def _source(code: str, files: dict[str, str]) -> str:
    if not files:
        return code
    # SandboxFusion's `files`: base64 contents written to the working directory before the code runs.
    return (
        "import base64 as _b, os as _o\n"
        f"for _p, _c in {sorted(files.items())!r}:\n"
        "    _d = _o.path.dirname(_p)\n"
        "    _d and _o.makedirs(_d, exist_ok=True)\n"
        "    open(_p, 'wb').write(_b.b64decode(_c))\n"
        "del _b, _o, _p, _c, _d\n" + code
    )


def program(problem: Any, completion: str) -> Program:
    request = json.loads(completion)
    return driver_program(
        {
            "mode": "run",
            "source": _source(request["code"], request.get("files") or {}),
            "setup": "",
            "cases": [{"input": request.get("stdin") or "", "output": ""}],
            "policy": "exact",
            "abs_tol": 0.0,
            "rel_tol": 0.0,
            "case_time_limit_s": case_time_limit_s(problem),
        }
    )


FORMAT = Format(name="run", program=program, summary="the problem behind POST /run_code (not for datasets)")
