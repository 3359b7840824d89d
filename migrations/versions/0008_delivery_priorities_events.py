"""live events, webhooks, priorities, per-key fairness and what failed per test"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0008"
down_revision = "0007"


def upgrade() -> None:
    # `run`: the problem behind POST /run_code (the program runs on its input; exit status 0 passes).
    op.drop_constraint(op.f("ck_problems_format"), "problems", type_="check")
    op.create_check_constraint(
        op.f("ck_problems_format"), "problems", "format IN ('humaneval', 'mbpp', 'stdio', 'call', 'run')"
    )
    # Nullable or constant-default columns: catalog changes, no table rewrite.
    op.add_column("runs", sa.Column("priority", sa.String(length=16), server_default=sa.text("'batch'"), nullable=False))
    op.add_column("runs", sa.Column("api_key_id", sa.UUID(), nullable=True))
    op.add_column("runs", sa.Column("callback_url", sa.Text(), nullable=True))
    # The last event number given to one of the run's samples (live events, resumable by number).
    op.add_column("runs", sa.Column("events", sa.BigInteger(), server_default=sa.text("0"), nullable=False))
    op.add_column("samples", sa.Column("event", sa.BigInteger(), nullable=True))
    op.add_column("samples", sa.Column("failure", postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    op.add_column("verdict_cache", sa.Column("failure", postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    op.create_index("ix_samples_run_event", "samples", ["run_id", "event"], postgresql_where=sa.text("event IS NOT NULL"))
    # The queue's claim looks up queued work by run: the index keeps that cheap under fairness ordering.
    op.create_index("ix_samples_queued_run", "samples", ["run_id", "id"], postgresql_where=sa.text("state = 'queued'"))
    # ... and by problem, to fill a batch with the same problem's samples of other runs.
    op.create_index("ix_samples_queued_problem", "samples", ["problem_id", "id"], postgresql_where=sa.text("state = 'queued'"))
    # Runs with work left: the queue picks among these (priority, then the key's share of the workers).
    op.create_index("ix_runs_active", "runs", ["created_at"], postgresql_where=sa.text("status IN ('queued', 'running')"))
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.BigInteger(), sa.Identity(), nullable=False),
        sa.Column("run_id", sa.UUID(), nullable=False),
        sa.Column("event", sa.String(length=16), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("delivered", sa.Boolean(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_webhook_deliveries_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_deliveries")),
    )
    op.create_index("ix_webhook_deliveries_run_id", "webhook_deliveries", ["run_id", "id"])
    # A finished run whose callback is still owed: the dispatcher claims these (SKIP LOCKED).
    op.add_column("runs", sa.Column("callback_state", sa.String(length=16), nullable=True))
    op.add_column("runs", sa.Column("callback_claimed_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_runs_callback_pending", "runs", ["finished_at"], postgresql_where=sa.text("callback_state IN ('pending', 'delivering')"))


def downgrade() -> None:
    op.execute("DELETE FROM samples WHERE problem_id IN (SELECT id FROM problems WHERE format = 'run')")
    op.execute("DELETE FROM problems WHERE format = 'run'")
    op.drop_constraint(op.f("ck_problems_format"), "problems", type_="check")
    op.create_check_constraint(
        op.f("ck_problems_format"), "problems", "format IN ('humaneval', 'mbpp', 'stdio', 'call')"
    )
    op.drop_index("ix_runs_callback_pending", table_name="runs")
    op.drop_column("runs", "callback_claimed_at")
    op.drop_column("runs", "callback_state")
    op.drop_index("ix_webhook_deliveries_run_id", table_name="webhook_deliveries")
    op.drop_table("webhook_deliveries")
    op.drop_index("ix_runs_active", table_name="runs")
    op.drop_index("ix_samples_queued_problem", table_name="samples")
    op.drop_index("ix_samples_queued_run", table_name="samples")
    op.drop_index("ix_samples_run_event", table_name="samples")
    op.drop_column("verdict_cache", "failure")
    op.drop_column("samples", "failure")
    op.drop_column("samples", "event")
    for name in ("events", "callback_url", "api_key_id", "priority"):
        op.drop_column("runs", name)
