"""Languages end to end: the API over HTTP, worker processes, the language's sandbox image."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import stack as stack  # noqa: F401  (the session's LocalStack fixture)

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets" / "humaneval-x"
SHARED = SHARED if SHARED.exists() else Path("/work/shared/datasets/humaneval-x")
DATA = Path(__file__).resolve().parents[1] / "data"


def humaneval_x_rows(file_language: str) -> list[dict[str, Any]]:
    """The 164 HumanEval-X rows of a language (`cpp`, `java`, `js`, `go`, `rust`), as published."""
    with gzip.open(SHARED / f"humaneval_{file_language}.jsonl.gz", "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def exceptions(language: str) -> dict[str, str]:
    """Canonical solutions that fail under the original harness too: task_id -> reason."""
    return json.loads((DATA / "humaneval_x_exceptions.json").read_text()).get(language, {})


def multipl_e_rows(language: str) -> list[dict[str, Any]]:
    path = DATA / "multipl-e" / f"{language}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def labelled_completions(solutions: dict, verdicts: dict[str, str]) -> dict[str, dict[str, tuple[str, str]]]:
    """problem -> label -> (completion, verdict): every completion of a solutions file
    (tests/data/multipl-e/solutions/<code>.json), each with the verdict its kind gets."""
    return {problem: {f"{problem} {kind}": (text, verdicts[kind]) for kind, text in variants.items()
                      if isinstance(text, str)}
            for problem, variants in solutions.items()}
