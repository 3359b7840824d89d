"""The models and the migrations describe one schema: Alembic finds nothing to migrate between them."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from service import models  # noqa: F401  (registers the tables on Base.metadata)
from service.database import Base, make_sync_engine


def test_models_match_the_migrated_database(database_url: str) -> None:
    engine = make_sync_engine(database_url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True, "compare_server_default": True})
            differences = compare_metadata(context, Base.metadata)
    finally:
        engine.dispose()
    assert differences == [], "models.py and migrations/versions disagree:\n" + "\n".join(map(repr, differences))
