"""The models and the migrations describe one schema: Alembic finds nothing to migrate between them, and the
CHECK constraints (which Alembic does not compare) are the same in both. Migrations 0012 (reward-hack flags) and
0015 (projects) up and down on a database holding rows."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession

from passk_dev.localstack import drop_database, maintenance_url
from service.core import models  # noqa: F401  (registers the tables on Base.metadata)
from service.api.auth.keys import generate_key
from service.api.auth.repository import find_active_by_raw
from service.core.database import Base, make_async_engine, make_sync_engine
from service.core.flags import FLAGS
from service.core.migrate import alembic_config


def test_models_match_the_migrated_database(database_url: str) -> None:
    engine = make_sync_engine(database_url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True, "compare_server_default": True})
            differences = compare_metadata(context, Base.metadata)
    finally:
        engine.dispose()
    assert differences == [], "models.py and migrations/versions disagree:\n" + "\n".join(map(repr, differences))


@pytest.fixture
def empty_database(database_url: str) -> Iterator[str]:
    """A new, empty database on the tests' server (dropped after)."""
    name = f"passk_schema_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(maintenance_url(database_url), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = make_url(database_url).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        drop_database(url)


_CHECKS = text(
    "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint "
    "WHERE contype = 'c' AND connamespace = 'public'::regnamespace"
)


def _unordered(definition: str) -> str:
    """A CHECK's text with the elements of each ARRAY[...] sorted: `x IN (...)` and `x <@ ARRAY[...]` mean the same
    whatever their order."""
    return re.sub(r"ARRAY\[([^\]]*)\]", lambda m: "ARRAY[" + ", ".join(sorted(m.group(1).split(", "))) + "]", definition)


def _checks(url: str) -> dict[tuple[str, str], str]:
    engine = make_sync_engine(url)
    try:
        with engine.connect() as connection:
            return {(table, name): _unordered(definition) for table, name, definition in connection.execute(_CHECKS)}
    finally:
        engine.dispose()


def test_check_constraints_match_the_models(database_url: str, empty_database: str) -> None:
    """What PostgreSQL made of each CHECK, from the migrations and from the models: a flag (or verdict, state,
    format) added to its enum without a migration that widens the constraint fails here, not in a worker that
    cannot record a verdict."""
    engine = make_sync_engine(empty_database)
    try:
        Base.metadata.create_all(engine)
    finally:
        engine.dispose()
    migrated, modelled = _checks(database_url), _checks(empty_database)
    assert ("samples", "ck_samples_flags") in migrated and ("verdict_cache", "ck_verdict_cache_flags") in migrated
    assert all(name in migrated[("samples", "ck_samples_flags")] for name in FLAGS)
    assert migrated == modelled


def test_migration_0012_adds_flags_and_takes_them_away(empty_database: str) -> None:
    config = alembic_config(empty_database)
    command.upgrade(config, "0011")
    engine = make_sync_engine(empty_database)
    try:
        with engine.begin() as db:
            dataset = db.execute(text("INSERT INTO datasets (id, name, digest, problem_count) "
                                      "VALUES (gen_random_uuid(), 'd', 'x', 1) RETURNING id")).scalar_one()
            problem = db.execute(text("INSERT INTO problems (dataset_id, position, key, prompt, test, entry_point) "
                                      "VALUES (:d, 0, 'p', '', '', 'f') RETURNING id"), {"d": dataset}).scalar_one()
            run = db.execute(text("INSERT INTO runs (id, dataset_id, model, sampling, sample_count) "
                                  "VALUES (gen_random_uuid(), :d, 'm', '{}', 2) RETURNING id"), {"d": dataset}).scalar_one()
            db.execute(text("INSERT INTO samples (run_id, problem_id, index, completion, state, verdict) "
                            "VALUES (:r, :p, 0, 'a', 'done', 'passed'), (:r, :p, 1, 'b', 'queued', NULL)"),
                       {"r": run, "p": problem})
        command.upgrade(config, "0012")
        with engine.begin() as db:
            # Existing rows have no flags: NULL, not an empty array.
            assert db.execute(text("SELECT count(*) FROM samples WHERE flags IS NULL")).scalar_one() == 2
            db.execute(text("UPDATE samples SET flags = ARRAY['ended_early', 'reached_judge'] WHERE index = 0"))
            index = db.execute(text("SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_samples_flagged'")).scalar_one()
            assert "(run_id, id) INCLUDE (verdict, flags) WHERE (flags IS NOT NULL)" in index
        for table, bad in (("samples", "ARRAY['forged']"), ("samples", "'{}'::text[]"),
                           ("samples", "ARRAY['ended_early', NULL]"), ("verdict_cache", "ARRAY['forged']")):
            with engine.begin() as db:
                if table == "samples":
                    statement = f"UPDATE samples SET flags = {bad} WHERE index = 1"
                else:
                    statement = f"INSERT INTO verdict_cache (key, verdict, flags) VALUES ('k', 'passed', {bad})"
                with pytest.raises(Exception, match="ck_" + table + "_flags"):
                    db.execute(text(statement))
        command.downgrade(config, "0011")
        with engine.begin() as db:
            columns = db.execute(text("SELECT table_name FROM information_schema.columns WHERE column_name = 'flags'"))
            assert columns.all() == []
            assert db.execute(text("SELECT count(*) FROM pg_indexes WHERE indexname = 'ix_samples_flagged'")).scalar_one() == 0
            assert db.execute(text("SELECT count(*) FROM samples")).scalar_one() == 2
        command.upgrade(config, "head")
    finally:
        engine.dispose()


def test_migration_0015_puts_every_row_in_the_default_project_and_keys_keep_working(empty_database: str) -> None:
    config = alembic_config(empty_database)
    command.upgrade(config, "0013")
    engine = make_sync_engine(empty_database)
    first, second = generate_key(), generate_key()
    try:
        with engine.begin() as db:
            keys = [db.execute(text("INSERT INTO api_keys (id, name, prefix, secret_hash, scopes) VALUES "
                                    "(gen_random_uuid(), :name, :prefix, :hash, ARRAY['read']) RETURNING id"),
                               {"name": name, "prefix": new.prefix, "hash": new.secret_hash}).scalar_one()
                    for name, new in (("ci", first), ("laptop", second))]
            dataset = db.execute(text("INSERT INTO datasets (id, name, digest, problem_count) "
                                      "VALUES (gen_random_uuid(), 'bench', 'x', 1) RETURNING id")).scalar_one()
            db.execute(text("INSERT INTO runs (id, dataset_id, model, sampling, sample_count) "
                            "VALUES (gen_random_uuid(), :d, 'm', '{}', 0)"), {"d": dataset})
            db.execute(text("INSERT INTO release_rules (id, name, clauses, confidence) "
                            "VALUES (gen_random_uuid(), 'gate', '[]', 0.95)"))
            # Two keys used one Idempotency-Key string: the project's namespace keeps the newer record.
            for key in keys:
                db.execute(text("INSERT INTO idempotency_keys (api_key_id, key, endpoint, request_sha256) "
                                "VALUES (:k, 'retry-1', 'POST /v1/runs', 'h')"), {"k": key})
        command.upgrade(config, "0015")
        with engine.begin() as db:
            for table in ("api_keys", "datasets", "runs", "release_rules", "idempotency_keys"):
                owners = db.execute(text(f"SELECT DISTINCT p.name FROM {table} t JOIN projects p ON p.id = t.project_id"))
                assert owners.scalars().all() == ["default"], table
            assert db.execute(text("SELECT api_key_id FROM idempotency_keys")).scalars().all() == [keys[1]]
            scopes = db.execute(text("SELECT scopes FROM api_keys WHERE prefix = :p"), {"p": first.prefix}).scalar_one()
            assert scopes == ["read"]
            # Another project may now use the same names.
            other = db.execute(text("INSERT INTO projects (id, name) VALUES (gen_random_uuid(), 'team-b') "
                                    "RETURNING id")).scalar_one()
            db.execute(text("INSERT INTO datasets (id, project_id, name, digest, problem_count) "
                            "VALUES (gen_random_uuid(), :p, 'bench', 'x', 1)"), {"p": other})
            db.execute(text("INSERT INTO release_rules (id, project_id, name, clauses, confidence) "
                            "VALUES (gen_random_uuid(), :p, 'gate', '[]', 0.95)"), {"p": other})
        command.downgrade(config, "0013")
        with engine.begin() as db:
            assert sorted(db.execute(text("SELECT name FROM datasets")).scalars()) == ["bench", "bench (team-b)"]
            assert sorted(db.execute(text("SELECT name FROM release_rules")).scalars()) == ["gate", "gate (team-b)"]
            assert db.execute(text("SELECT count(*) FROM api_keys")).scalar_one() == 2
        command.upgrade(config, "head")
    finally:
        engine.dispose()


async def test_a_key_made_before_projects_acts_for_the_default_project(empty_database: str) -> None:
    """Through the key lookup the API uses: the key of a row written before 0015 still admits its holder."""
    config = alembic_config(empty_database)
    command.upgrade(config, "0013")
    engine = make_sync_engine(empty_database)
    new = generate_key()
    try:
        with engine.begin() as db:
            db.execute(text("INSERT INTO api_keys (id, name, prefix, secret_hash, scopes) VALUES "
                            "(gen_random_uuid(), 'old', :prefix, :hash, ARRAY['read', 'submit'])"),
                       {"prefix": new.prefix, "hash": new.secret_hash})
    finally:
        engine.dispose()
    command.upgrade(config, "head")
    async_engine = make_async_engine(empty_database)
    try:
        async with AsyncSession(async_engine) as session:
            principal = await find_active_by_raw(session, new.raw)
    finally:
        await async_engine.dispose()
    assert principal is not None and principal.project == "default" and principal.scopes == {"read", "submit"}


def test_checkpoint_columns_up_and_down(empty_database: str) -> None:
    """0018 adds a run's checkpoint and step (empty on the runs already there) and takes them away again."""
    config = alembic_config(empty_database)
    command.upgrade(config, "0017")
    engine = make_sync_engine(empty_database)
    columns = text("SELECT column_name FROM information_schema.columns WHERE table_name = 'runs' "
                   "AND column_name IN ('checkpoint', 'step') ORDER BY column_name")
    index = text("SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_runs_checkpoints'")
    try:
        command.upgrade(config, "0018")
        with engine.connect() as db:
            assert db.execute(columns).scalars().all() == ["checkpoint", "step"]
            assert "WHERE (step IS NOT NULL)" in db.execute(index).scalar_one()
        command.downgrade(config, "0017")
        with engine.connect() as db:
            assert db.execute(columns).scalars().all() == [] and db.execute(index).scalar_one_or_none() is None
        command.upgrade(config, "head")
    finally:
        engine.dispose()
