"""problem formats: MBPP, stdin/stdout and call-based problems"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = '0003'
down_revision = '0002'


def upgrade() -> None:
    # Existing rows are HumanEval problems: the server default fills them in.
    op.add_column('problems', sa.Column('format', sa.Text(), server_default=sa.text("'humaneval'"), nullable=False))
    op.add_column('problems', sa.Column('cases', postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    op.add_column('problems', sa.Column('setup_code', sa.Text(), nullable=True))
    op.add_column('problems', sa.Column('comparison', sa.Text(), nullable=True))
    op.add_column('problems', sa.Column('abs_tol', sa.Float(), nullable=True))
    op.add_column('problems', sa.Column('rel_tol', sa.Float(), nullable=True))
    op.create_check_constraint(
        op.f('ck_problems_format'), 'problems', "format IN ('humaneval', 'mbpp', 'stdio', 'call')"
    )
    op.create_check_constraint(
        op.f('ck_problems_comparison'),
        'problems',
        "comparison IS NULL OR comparison IN ('exact', 'whitespace', 'numeric')",
    )


def downgrade() -> None:
    op.drop_constraint(op.f('ck_problems_comparison'), 'problems', type_='check')
    op.drop_constraint(op.f('ck_problems_format'), 'problems', type_='check')
    op.drop_column('problems', 'rel_tol')
    op.drop_column('problems', 'abs_tol')
    op.drop_column('problems', 'comparison')
    op.drop_column('problems', 'setup_code')
    op.drop_column('problems', 'cases')
    op.drop_column('problems', 'format')
