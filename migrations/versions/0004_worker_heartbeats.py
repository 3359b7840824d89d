"""worker heartbeats, and indexes for the operations status"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'


def upgrade() -> None:
    # One row per worker process: written on start and every maintenance tick, deleted on a clean exit.
    # A worker is live while expires_at (a few ticks ahead of its last beat) is in the future.
    op.create_table('worker_heartbeats',
    sa.Column('owner', sa.String(length=200), nullable=False),
    sa.Column('hostname', sa.String(length=200), nullable=False),
    sa.Column('pid', sa.Integer(), nullable=False),
    sa.Column('threads', sa.Integer(), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('seen_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('processed', sa.BigInteger(), server_default=sa.text('0'), nullable=False),
    sa.Column('sandbox_errors', sa.BigInteger(), server_default=sa.text('0'), nullable=False),
    sa.PrimaryKeyConstraint('owner', name=op.f('pk_worker_heartbeats'))
    )
    # GET /v1/status: "finished in the last minute" and "sandbox errors in the last hour" are range scans
    # over recent rows instead of a scan of every sample ever stored.
    op.create_index('ix_samples_finished_at', 'samples', ['finished_at'], unique=False,
                    postgresql_where=sa.text('finished_at IS NOT NULL'))
    op.create_index('ix_samples_sandbox_errors', 'samples', ['finished_at'], unique=False,
                    postgresql_where=sa.text("verdict = 'sandbox_error'"))


def downgrade() -> None:
    op.drop_index('ix_samples_sandbox_errors', table_name='samples', postgresql_where=sa.text("verdict = 'sandbox_error'"))
    op.drop_index('ix_samples_finished_at', table_name='samples', postgresql_where=sa.text('finished_at IS NOT NULL'))
    op.drop_table('worker_heartbeats')
