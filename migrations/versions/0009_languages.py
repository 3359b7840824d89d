"""languages: a dataset's language, formats humaneval-x and multipl-e, verdict compile_error, toolchains"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"

_FORMATS_BEFORE = "format IN ('humaneval', 'mbpp', 'stdio', 'call', 'run')"
_FORMATS = "format IN ('humaneval', 'mbpp', 'stdio', 'call', 'run', 'humaneval-x', 'multipl-e')"
_VERDICTS_BEFORE = "verdict IS NULL OR verdict IN ('passed', 'failed', 'error', 'timeout', 'memory', 'crashed', 'sandbox_error')"
_VERDICTS = (
    "verdict IS NULL OR verdict IN "
    "('passed', 'failed', 'error', 'timeout', 'memory', 'crashed', 'sandbox_error', 'compile_error')"
)


def upgrade() -> None:
    # A constant default: a catalog change, no table rewrite. Languages are checked by the API (the
    # registry in sandbox/languages), not by a constraint, so adding one needs no migration.
    op.add_column("datasets", sa.Column("language", sa.String(length=32), server_default=sa.text("'python'"), nullable=False))
    op.drop_constraint(op.f("ck_problems_format"), "problems", type_="check")
    op.create_check_constraint(op.f("ck_problems_format"), "problems", _FORMATS)
    op.drop_constraint(op.f("ck_samples_verdict"), "samples", type_="check")
    op.create_check_constraint(op.f("ck_samples_verdict"), "samples", _VERDICTS)
    # The toolchain each language's image reports (written by workers when they first use the image).
    op.create_table(
        "toolchains",
        sa.Column("language", sa.String(length=32), primary_key=True),
        sa.Column("image", sa.Text(), nullable=False),
        sa.Column("version", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("toolchains")
    op.execute("DELETE FROM samples WHERE verdict = 'compile_error'")
    op.drop_constraint(op.f("ck_samples_verdict"), "samples", type_="check")
    op.create_check_constraint(op.f("ck_samples_verdict"), "samples", _VERDICTS_BEFORE)
    op.execute("DELETE FROM problems WHERE format IN ('humaneval-x', 'multipl-e')")
    op.drop_constraint(op.f("ck_problems_format"), "problems", type_="check")
    op.create_check_constraint(op.f("ck_problems_format"), "problems", _FORMATS_BEFORE)
    op.drop_column("datasets", "language")
