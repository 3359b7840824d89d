"""runs may name the training checkpoint they evaluate: `checkpoint` (a name) and `step` (its training step)

One model's runs on one dataset, ordered by step, are that model's progress over training (GET /v1/checkpoints);
the partial index finds them without touching runs that carry no step.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"


def upgrade() -> None:
    op.add_column("runs", sa.Column("checkpoint", sa.String(length=300), nullable=True))
    op.add_column("runs", sa.Column("step", sa.BigInteger(), nullable=True))
    op.create_index(
        "ix_runs_checkpoints", "runs", ["project_id", "model", "dataset_id", "step"],
        postgresql_where=sa.text("step IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_runs_checkpoints", table_name="runs", postgresql_where=sa.text("step IS NOT NULL"))
    op.drop_column("runs", "step")
    op.drop_column("runs", "checkpoint")
