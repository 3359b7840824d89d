"""the result cache's entries found by age, for retention (PASSK_STREAM_RETENTION_DAYS)"""

from __future__ import annotations

from alembic import op

revision = "0021"
down_revision = "0020"


def upgrade() -> None:
    op.create_index("ix_verdict_cache_created_at", "verdict_cache", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_verdict_cache_created_at", table_name="verdict_cache")
