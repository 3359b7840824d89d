"""Reward-hack flags as the service stores, counts and shows them.

While a program runs, the sandbox notices things only a forger does and reports them with the verdict
(sandbox/runtime/report.py, `FLAGS`: name -> what the program did). A sample keeps the flags its program
raised (`samples.flags`, NULL when none; the verdict cache keeps them too, so a cached sample carries the
flags of the program it repeats), and a run counts its flagged samples: progress, metrics (with a
warning), the sample listing, the dashboard, the CLI and exports show them. A flagged sample keeps its
verdict: a program that reached for the judge and then returned the right answer still passed, which is
exactly what an RL team whose rewards are these verdicts needs to see.

FLAGS is the one list of names: the columns' CHECK (models.py) and the API's `Flag` come from it. A new
flag needs a migration that widens the CHECK (tests/test_schema.py compares the migrated database's
constraints with the models').
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from sandbox.runtime.report import FLAGS

__all__ = ["FLAGS", "Flag", "canonical", "check", "described", "wire_text"]

# The names as an enum, for query parameters (a 422 names the known ones).
Flag = StrEnum("Flag", {name: name for name in FLAGS})  # type: ignore[misc]


def canonical(flags: Iterable[str]) -> list[str] | None:
    """The known flags among `flags`, once each in FLAGS order; None when there are none (the column's NULL)."""
    given = set(flags)
    kept = [name for name in FLAGS if name in given]
    return kept or None


def wire_text(flags: list[str] | None) -> str | None:
    """A canonical list as one text parameter (comma-separated; names never hold a comma): a text[] column
    cannot travel in the 2-D array parameter of a batch record, so SQL splits this again (string_to_array)."""
    return None if flags is None else ",".join(flags)


def check(column: str, names: Iterable[str] = FLAGS) -> str:
    """The CHECK of a flags column: NULL when none, else a non-empty array of known names."""
    listed = ", ".join(f"'{name}'" for name in names)
    return f"{column} IS NULL OR (cardinality({column}) > 0 AND {column} <@ ARRAY[{listed}]::text[])"


def described(counts: dict[str, int]) -> str:
    """`2 ended with status 0 before its tests finished (ended_early), 1 ...`: the non-zero counts in words."""
    return ", ".join(f"{counts[name]} {text} ({name})" for name, text in FLAGS.items() if counts.get(name))
