"""event ids from one sequence, the end of a run decided after the records (records of a run no longer wait
for each other on the run's row)"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"


def upgrade() -> None:
    # Past every event number given so far, so that each run's ids keep growing across the upgrade.
    op.execute("CREATE SEQUENCE sample_events")
    op.execute("SELECT setval('sample_events', COALESCE((SELECT max(event) FROM samples), 0) + 1, false)")
    op.create_index("ix_samples_leased_run", "samples", ["run_id"], postgresql_where=sa.text("state = 'leased'"))
    op.drop_column("runs", "events")


def downgrade() -> None:
    op.add_column("runs", sa.Column("events", sa.BigInteger(), server_default=sa.text("0"), nullable=False))
    # Each run's events numbered again 1, 2, ... in the order of their ids.
    op.execute(
        "UPDATE samples s SET event = n.k FROM (SELECT id, row_number() OVER (PARTITION BY run_id ORDER BY event) AS k "
        "FROM samples WHERE event IS NOT NULL) n WHERE s.id = n.id"
    )
    op.execute(
        "UPDATE runs r SET events = c.n FROM (SELECT run_id, count(*) AS n FROM samples WHERE event IS NOT NULL "
        "GROUP BY run_id) c WHERE r.id = c.run_id"
    )
    op.drop_index("ix_samples_leased_run", table_name="samples")
    op.execute("DROP SEQUENCE sample_events")
