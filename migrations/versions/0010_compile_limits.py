"""compile limits: optional compile time and memory limits on datasets and runs (over the language's defaults)"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"


def upgrade() -> None:
    # Nullable, no default: catalog changes only, no table rewrite.
    for table in ("datasets", "runs"):
        op.add_column(table, sa.Column("compile_time_limit_s", sa.Float(), nullable=True))
        op.add_column(table, sa.Column("compile_memory_mb", sa.Integer(), nullable=True))


def downgrade() -> None:
    for table in ("runs", "datasets"):
        op.drop_column(table, "compile_memory_mb")
        op.drop_column(table, "compile_time_limit_s")
