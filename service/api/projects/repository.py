"""Project rows, for operators (`passk projects`, `passk keys create --project`). Functions never commit."""

from __future__ import annotations

import re

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from service.core.models import ApiKey, Project

# Every row that existed before projects joined this one (migration 0015); new keys go here unless told.
DEFAULT_PROJECT = "default"


# No slash: `PROJECT/DATASET` names another project's shared dataset (service/client.py).
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class UnknownProject(LookupError):
    pass


class BadProjectName(ValueError):
    pass


def create_project(session: Session, name: str) -> tuple[Project, bool]:
    """(the project, created); an existing name is returned as it is."""
    if not NAME.match(name):
        raise BadProjectName(f"project name {name!r}: letters, digits, '.', '_' and '-' (up to 100), starting with a "
                             "letter or digit")
    inserted = session.scalar(
        pg_insert(Project).values(name=name).on_conflict_do_nothing(index_elements=["name"]).returning(Project)
    )
    if inserted is not None:
        return inserted, True
    return by_name(session, name), False


def by_name(session: Session, name: str) -> Project:
    found = session.scalar(select(Project).where(Project.name == name))
    if found is None:
        known = ", ".join(session.scalars(select(Project.name).order_by(Project.name).limit(20)))
        raise UnknownProject(f"no project named {name!r} (known: {known or 'none'}); create it with "
                             f"`passk projects create {name}`")
    return found


def default_project(session: Session) -> Project:
    """The `default` project (made by the migration; made again if an operator removed it)."""
    return create_project(session, DEFAULT_PROJECT)[0]


def list_projects(session: Session) -> list[tuple[Project, int]]:
    """Every project with its number of active keys, oldest first."""
    keys = (
        select(func.count()).where(ApiKey.project_id == Project.id, ApiKey.revoked_at.is_(None))
        .correlate(Project).scalar_subquery()
    )
    return [(project, count) for project, count in session.execute(select(Project, keys).order_by(Project.created_at))]
