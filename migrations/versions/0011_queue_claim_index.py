"""queue: drop ix_samples_queued (queued samples by id alone)

The claim walks the head run's queued samples in id order (ix_samples_queued_run, ix_samples_queued_group) and
other runs' by problem (ix_samples_queued_problem). With ix_samples_queued also on offer, the planner often
took it for "the head run's first queued sample", filtering every queued sample of the runs before it (tens of
milliseconds per claim once the queue holds a few hundred thousand samples); counts of queued samples use any
of the other partial indexes.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_samples_queued", table_name="samples", postgresql_where=sa.text("state = 'queued'"))


def downgrade() -> None:
    op.create_index("ix_samples_queued", "samples", ["id"], unique=False, postgresql_where=sa.text("state = 'queued'"))
