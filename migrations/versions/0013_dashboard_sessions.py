"""dashboard sessions kept server-side: a cookie names a row, and logging out or revoking the row ends it

Cookies signed before this revision carried a key id and no row: they no longer verify, so their holders log
in again once.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"


def upgrade() -> None:
    op.create_table(
        "dashboard_sessions",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("key_id", sa.UUID(), nullable=False),
        sa.Column("user_agent", sa.String(length=300), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["key_id"], ["api_keys.id"], name=op.f("fk_dashboard_sessions_key_id_api_keys"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dashboard_sessions")),
    )
    op.create_index(op.f("ix_dashboard_sessions_key_id"), "dashboard_sessions", ["key_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_dashboard_sessions_key_id"), table_name="dashboard_sessions")
    op.drop_table("dashboard_sessions")
