"""initial schema"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = '0001'
down_revision = None


def upgrade() -> None:
    op.create_table('datasets',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('digest', sa.String(length=64), nullable=False),
    sa.Column('problem_count', sa.Integer(), nullable=False),
    sa.Column('time_limit_s', sa.Float(), nullable=True),
    sa.Column('memory_mb', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_datasets')),
    sa.UniqueConstraint('name', 'digest', name=op.f('uq_datasets_name'))
    )
    op.create_table('problems',
    sa.Column('id', sa.BigInteger(), sa.Identity(always=False), nullable=False),
    sa.Column('dataset_id', sa.UUID(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=300), nullable=False),
    sa.Column('prompt', sa.Text(), nullable=False),
    sa.Column('test', sa.Text(), nullable=False),
    sa.Column('entry_point', sa.String(length=300), nullable=False),
    sa.Column('canonical_solution', sa.Text(), nullable=True),
    sa.Column('tags', postgresql.ARRAY(sa.Text()), server_default=sa.text("'{}'"), nullable=False),
    sa.Column('time_limit_s', sa.Float(), nullable=True),
    sa.Column('memory_mb', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['dataset_id'], ['datasets.id'], name=op.f('fk_problems_dataset_id_datasets'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_problems')),
    sa.UniqueConstraint('dataset_id', 'key', name=op.f('uq_problems_dataset_id'))
    )
    op.create_table('runs',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('dataset_id', sa.UUID(), nullable=False),
    sa.Column('model', sa.String(length=300), nullable=False),
    sa.Column('sampling', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('time_limit_s', sa.Float(), nullable=True),
    sa.Column('memory_mb', sa.Integer(), nullable=True),
    sa.Column('use_cache', sa.Boolean(), server_default=sa.text('true'), nullable=False),
    sa.Column('status', sa.String(length=16), server_default=sa.text("'queued'"), nullable=False),
    sa.Column('sample_count', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("status IN ('queued', 'running', 'completed', 'failed', 'cancelled')", name=op.f('ck_runs_status')),
    sa.ForeignKeyConstraint(['dataset_id'], ['datasets.id'], name=op.f('fk_runs_dataset_id_datasets'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_runs'))
    )
    op.create_index('ix_runs_created_at', 'runs', ['created_at'], unique=False)
    op.create_table('samples',
    sa.Column('id', sa.BigInteger(), sa.Identity(always=False), nullable=False),
    sa.Column('run_id', sa.UUID(), nullable=False),
    sa.Column('problem_id', sa.BigInteger(), nullable=False),
    sa.Column('index', sa.Integer(), nullable=False),
    sa.Column('completion', sa.Text(), nullable=False),
    sa.Column('state', sa.String(length=16), server_default=sa.text("'queued'"), nullable=False),
    sa.Column('attempts', sa.Integer(), server_default=sa.text('0'), nullable=False),
    sa.Column('lease_owner', sa.String(length=200), nullable=True),
    sa.Column('lease_expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('verdict', sa.String(length=16), nullable=True),
    sa.Column('duration_ms', sa.Float(), nullable=True),
    sa.Column('cpu_ms', sa.Float(), nullable=True),
    sa.Column('exit_code', sa.Integer(), nullable=True),
    sa.Column('signal', sa.Integer(), nullable=True),
    sa.Column('detail', sa.Text(), nullable=True),
    sa.Column('stdout', sa.Text(), nullable=True),
    sa.Column('stderr', sa.Text(), nullable=True),
    sa.Column('stdout_truncated', sa.Boolean(), server_default=sa.text('false'), nullable=False),
    sa.Column('stderr_truncated', sa.Boolean(), server_default=sa.text('false'), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("(state = 'done') = (verdict IS NOT NULL)", name=op.f('ck_samples_done_has_verdict')),
    sa.CheckConstraint("state IN ('queued', 'leased', 'done', 'cancelled')", name=op.f('ck_samples_state')),
    sa.CheckConstraint("verdict IS NULL OR verdict IN ('passed', 'failed', 'error', 'timeout', 'memory', 'crashed', 'sandbox_error')", name=op.f('ck_samples_verdict')),
    sa.ForeignKeyConstraint(['problem_id'], ['problems.id'], name=op.f('fk_samples_problem_id_problems'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_samples_run_id_runs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_samples'))
    )
    op.create_index('ix_samples_leased', 'samples', ['lease_expires_at'], unique=False, postgresql_where=sa.text("state = 'leased'"))
    op.create_index('ix_samples_queued', 'samples', ['id'], unique=False, postgresql_where=sa.text("state = 'queued'"))
    op.create_index('ix_samples_queued_group', 'samples', ['run_id', 'problem_id', 'id'], unique=False, postgresql_where=sa.text("state = 'queued'"))
    op.create_index('ix_samples_run_problem', 'samples', ['run_id', 'problem_id'], unique=False, postgresql_include=['state', 'verdict'])


def downgrade() -> None:
    op.drop_index('ix_samples_run_problem', table_name='samples', postgresql_include=['state', 'verdict'])
    op.drop_index('ix_samples_queued_group', table_name='samples', postgresql_where=sa.text("state = 'queued'"))
    op.drop_index('ix_samples_queued', table_name='samples', postgresql_where=sa.text("state = 'queued'"))
    op.drop_index('ix_samples_leased', table_name='samples', postgresql_where=sa.text("state = 'leased'"))
    op.drop_table('samples')
    op.drop_index('ix_runs_created_at', table_name='runs')
    op.drop_table('runs')
    op.drop_table('problems')
    op.drop_table('datasets')
