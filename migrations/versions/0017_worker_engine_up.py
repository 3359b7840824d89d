"""worker heartbeats say whether the worker's Docker engine answers (GET /v1/status, passk_engine_up)"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"


def upgrade() -> None:
    op.add_column("worker_heartbeats", sa.Column("engine_up", sa.Boolean(), server_default=sa.text("true"), nullable=False))


def downgrade() -> None:
    op.drop_column("worker_heartbeats", "engine_up")
