"""reward-hack flags: samples.flags and verdict_cache.flags, and an index of each run's flagged samples

A sample's flags are what only a forger does, as the sandbox saw its program do it (names and meanings:
sandbox/runtime/report.py FLAGS, the one list; service/core/flags.py). NULL when none, so the partial index holds
flagged samples only: a run's counts and its flagged samples are read from it without scanning the run's
samples (it INCLUDEs verdict and flags, so the counts are an index-only scan).

The CHECK's names are the FLAGS of this revision, written out as migrations keep their history; a flag
added later comes with a migration that widens it (tests/test_schema.py fails until it does).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0012"
down_revision = "0011"

_NAMES = "'ended_early', 'out_of_turn', 'reached_judge'"


def _check(column: str) -> str:
    return f"{column} IS NULL OR (cardinality({column}) > 0 AND {column} <@ ARRAY[{_NAMES}]::text[])"


def upgrade() -> None:
    # Nullable, no default: catalog changes, no table rewrite (the CHECKs and the index read each table once).
    for table in ("samples", "verdict_cache"):
        op.add_column(table, sa.Column("flags", postgresql.ARRAY(sa.Text()), nullable=True))
        op.create_check_constraint(op.f(f"ck_{table}_flags"), table, _check("flags"))
    op.create_index(
        "ix_samples_flagged", "samples", ["run_id", "id"], postgresql_include=["verdict", "flags"],
        postgresql_where=sa.text("flags IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_samples_flagged", table_name="samples", postgresql_where=sa.text("flags IS NOT NULL"))
    for table in ("verdict_cache", "samples"):
        op.drop_constraint(op.f(f"ck_{table}_flags"), table, type_="check")
        op.drop_column(table, "flags")
