"""the claim's candidate runs found by walking each API key's active runs of each priority, oldest first"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"

_KEY = "coalesce(api_key_id, '00000000-0000-0000-0000-000000000000'::uuid)"


def upgrade() -> None:
    op.create_index("ix_runs_claim_order", "runs", [sa.text(_KEY), "priority", "created_at", "id"],
                    postgresql_where=sa.text("status IN ('queued', 'running')"))


def downgrade() -> None:
    op.drop_index("ix_runs_claim_order", table_name="runs")
