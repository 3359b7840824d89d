"""Program text for the formats judged by the in-sandbox driver (stdin/stdout and call-based)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from service.problems import Program

_HERE = Path(__file__).resolve().parent
# Time the driver itself needs (start-up, forks, comparisons) on top of the cases' CPU time.
PROGRAM_SLACK_S = 1.0
PER_CASE_SLACK_S = 0.05


@lru_cache(maxsize=1)
def driver_source() -> str:
    """compare.py then driver.py, verbatim: what runs in the sandbox is what the tests import."""
    return (_HERE / "compare.py").read_text(encoding="utf-8") + "\n\n" + (_HERE / "driver.py").read_text(encoding="utf-8")


def driver_program(config: dict[str, Any]) -> Program:
    """The driver plus one call with `config` (mode, source, setup, cases, policy, limits).

    The whole sample gets every case's limit plus slack, so the sandbox's own
    limit only stops a driver that is itself stuck.
    """
    cases = len(config["cases"])
    payload = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    text = f"{driver_source()}\n\n_passk_main({payload!r})\n"
    limit = config["case_time_limit_s"] * cases + PROGRAM_SLACK_S + PER_CASE_SLACK_S * cases
    return Program(text, round(limit, 3))
