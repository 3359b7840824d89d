"""run management and coverage: problem_count, display_name, note, tags, archived"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    # How many of its dataset's problems a run has samples for ("40 of 164 problems").
    op.add_column("runs", sa.Column("problem_count", sa.Integer(), server_default=sa.text("0"), nullable=False))
    op.execute(
        "UPDATE runs SET problem_count = sub.problems FROM "
        "(SELECT run_id, count(DISTINCT problem_id) AS problems FROM samples GROUP BY run_id) AS sub "
        "WHERE sub.run_id = runs.id"
    )
    op.add_column("runs", sa.Column("display_name", sa.String(length=300), nullable=True))
    op.add_column("runs", sa.Column("note", sa.Text(), nullable=True))
    op.add_column(
        "runs",
        sa.Column("tags", postgresql.ARRAY(sa.Text()), server_default=sa.text("'{}'"), nullable=False),
    )
    op.add_column("runs", sa.Column("archived", sa.Boolean(), server_default=sa.text("false"), nullable=False))
    op.create_index("ix_runs_tags", "runs", ["tags"], postgresql_using="gin")


def downgrade() -> None:
    op.drop_index("ix_runs_tags", table_name="runs")
    for column in ("archived", "tags", "note", "display_name", "problem_count"):
        op.drop_column("runs", column)
