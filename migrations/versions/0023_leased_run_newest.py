"""a run's leased samples indexed by lease expiry too, so that the end-of-run check finds the newest lease first"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"

_LEASED = sa.text("state = 'leased'")


def upgrade() -> None:
    op.drop_index("ix_samples_leased_run", table_name="samples")
    op.create_index("ix_samples_leased_run", "samples", ["run_id", "lease_expires_at"], postgresql_where=_LEASED)


def downgrade() -> None:
    op.drop_index("ix_samples_leased_run", table_name="samples")
    op.create_index("ix_samples_leased_run", "samples", ["run_id"], postgresql_where=_LEASED)
