"""problems.format: no CHECK; the format registry (service/formats/registry.py) is the one list of formats

A new format is then one module, as a new language is (the language's CHECK went the same way). The problem
behind POST /run_code gets its format's new name, `run_code` (was `run`, a word that names a model's samples).
"""

from __future__ import annotations

from alembic import op

revision = "0016"
down_revision = "0015"

_FORMATS = "format IN ('humaneval', 'mbpp', 'stdio', 'call', 'run', 'humaneval-x', 'multipl-e')"


def upgrade() -> None:
    op.drop_constraint(op.f("ck_problems_format"), "problems", type_="check")
    op.execute("UPDATE problems SET format = 'run_code' WHERE format = 'run'")


def downgrade() -> None:
    op.execute("UPDATE problems SET format = 'run' WHERE format = 'run_code'")
    op.create_check_constraint(op.f("ck_problems_format"), "problems", _FORMATS)
