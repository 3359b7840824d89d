"""projects own keys, datasets, runs, release rules and idempotency keys; datasets can be shared and hide tests

Every existing row joins the project named `default` (made here), so existing keys keep working with the
scopes they had, and see what they saw. Dataset names and release-rule names become the project's: the unique
constraints gain project_id.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0013"

DEFAULT = "default"
# Tables whose rows belong to a project, with what happens to them when the project goes (never: RESTRICT).
OWNED = (("api_keys", "RESTRICT"), ("datasets", "RESTRICT"), ("runs", "RESTRICT"), ("release_rules", "RESTRICT"),
         ("idempotency_keys", "CASCADE"))


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_projects")),
        sa.UniqueConstraint("name", name=op.f("uq_projects_name")),
    )
    op.execute(f"INSERT INTO projects (id, name) VALUES (gen_random_uuid(), '{DEFAULT}')")
    default = f"(SELECT id FROM projects WHERE name = '{DEFAULT}')"
    for table, on_delete in OWNED:
        op.add_column(table, sa.Column("project_id", sa.UUID(), nullable=True))
        op.execute(f"UPDATE {table} SET project_id = {default}")
        op.alter_column(table, "project_id", nullable=False)
        op.create_foreign_key(op.f(f"fk_{table}_project_id_projects"), table, "projects", ["project_id"], ["id"],
                              ondelete=on_delete)
    op.create_index(op.f("ix_api_keys_project_id"), "api_keys", ["project_id"])
    op.create_index("ix_runs_project_created_at", "runs", ["project_id", "created_at"])

    op.drop_constraint("uq_datasets_name", "datasets", type_="unique")
    op.create_unique_constraint(op.f("uq_datasets_project_id"), "datasets", ["project_id", "name", "digest"])
    op.create_index("ix_datasets_project_name", "datasets", ["project_id", "name"])
    op.add_column("datasets", sa.Column("shared", sa.Boolean(), server_default=sa.text("false"), nullable=False))
    op.add_column("datasets", sa.Column("hidden_tests", sa.Boolean(), server_default=sa.text("false"), nullable=False))
    op.add_column("problems", sa.Column("hidden_tests", sa.Boolean(), server_default=sa.text("false"), nullable=False))

    op.drop_constraint("uq_release_rules_name", "release_rules", type_="unique")
    op.create_unique_constraint(op.f("uq_release_rules_project_id"), "release_rules", ["project_id", "name"])

    # Idempotency keys were each key's; now the project's. Where two keys used one string, the newest record
    # stays (records only matter to a retry of the request that made them).
    op.execute("DELETE FROM idempotency_keys a USING idempotency_keys b "
               "WHERE a.project_id = b.project_id AND a.key = b.key AND a.id < b.id")
    op.drop_constraint("uq_idempotency_keys_api_key_id", "idempotency_keys", type_="unique")
    op.create_unique_constraint(op.f("uq_idempotency_keys_project_id"), "idempotency_keys", ["project_id", "key"])


def downgrade() -> None:
    # Names were global: other projects' datasets and rules take their project's name as a suffix, so nothing
    # collides and nothing is lost.
    suffix = "left({t}.name || ' (' || projects.name || ')', 200)"
    for table in ("datasets", "release_rules"):
        op.execute(f"UPDATE {table} SET name = {suffix.format(t=table)} FROM projects "
                   f"WHERE projects.id = {table}.project_id AND projects.name <> '{DEFAULT}'")
    op.execute("DELETE FROM idempotency_keys a USING idempotency_keys b "
               "WHERE a.api_key_id = b.api_key_id AND a.key = b.key AND a.id < b.id")
    op.drop_constraint("uq_idempotency_keys_project_id", "idempotency_keys", type_="unique")
    op.create_unique_constraint("uq_idempotency_keys_api_key_id", "idempotency_keys", ["api_key_id", "key"])
    op.drop_constraint("uq_release_rules_project_id", "release_rules", type_="unique")
    op.create_unique_constraint("uq_release_rules_name", "release_rules", ["name"])
    op.drop_column("problems", "hidden_tests")
    op.drop_column("datasets", "hidden_tests")
    op.drop_column("datasets", "shared")
    op.drop_index("ix_datasets_project_name", table_name="datasets")
    op.drop_constraint("uq_datasets_project_id", "datasets", type_="unique")
    op.create_unique_constraint("uq_datasets_name", "datasets", ["name", "digest"])
    op.drop_index("ix_runs_project_created_at", table_name="runs")
    op.drop_index("ix_api_keys_project_id", table_name="api_keys")
    for table, _ in OWNED:
        op.drop_constraint(f"fk_{table}_project_id_projects", table, type_="foreignkey")
        op.drop_column(table, "project_id")
    op.drop_table("projects")
