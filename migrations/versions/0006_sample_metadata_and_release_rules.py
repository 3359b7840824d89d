"""per-sample cost, latency, tokens, confidence and steps; run currency; release rules"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0006"
down_revision = "0005"

_SAMPLE_COLUMNS = (
    ("cost", sa.Float()),
    ("latency_ms", sa.Float()),
    ("input_tokens", sa.Integer()),
    ("output_tokens", sa.Integer()),
    ("confidence", sa.Float()),
    ("steps", sa.Integer()),
)


def upgrade() -> None:
    # Nullable columns without defaults: a catalog change, no table rewrite.
    for name, type_ in _SAMPLE_COLUMNS:
        op.add_column("samples", sa.Column(name, type_, nullable=True))
    op.add_column("runs", sa.Column("currency", sa.String(length=3), nullable=True))
    op.create_table(
        "release_rules",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("clauses", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_release_rules")),
        sa.UniqueConstraint("name", name=op.f("uq_release_rules_name")),
    )


def downgrade() -> None:
    op.drop_table("release_rules")
    op.drop_column("runs", "currency")
    for name, _ in reversed(_SAMPLE_COLUMNS):
        op.drop_column("samples", name)
