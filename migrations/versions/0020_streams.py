"""streams: /run_code and /v1/judge runs grouped by project and client-chosen name; their programs and outputs
pruned after the retention time while their verdicts stay"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"


def upgrade() -> None:
    op.add_column("runs", sa.Column("stream", sa.String(200), nullable=True))
    op.add_column("runs", sa.Column("pruned_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_runs_stream", "runs", ["project_id", "stream", "created_at"],
                    postgresql_where=sa.text("stream IS NOT NULL"))
    op.create_index("ix_runs_stream_unpruned", "runs", ["finished_at"],
                    postgresql_where=sa.text("stream IS NOT NULL AND pruned_at IS NULL"))


def downgrade() -> None:
    op.drop_index("ix_runs_stream_unpruned", table_name="runs")
    op.drop_index("ix_runs_stream", table_name="runs")
    op.drop_column("runs", "pruned_at")
    op.drop_column("runs", "stream")
