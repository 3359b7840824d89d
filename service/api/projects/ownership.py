"""Which rows a caller may read: the one place that turns a Principal into SQL conditions.

A project reads its own runs, release rules and datasets, and the datasets other projects share; an operator
(`admin` scope) reads everything. What a caller may not read does not exist for it: repositories filter with
these conditions, so another project's object is the same 404 as no object at all.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, and_, bindparam, false, or_, true
from sqlalchemy.types import Boolean

from service.api.auth.principal import Principal
from service.core.models import Dataset, Project


def owned(principal: Principal, project_column: Any) -> ColumnElement[bool]:
    """Rows of the caller's project (every row for an operator)."""
    return true() if principal.admin else project_column == principal.project_id


def owned_param(project_column: Any) -> ColumnElement[bool]:
    """`owned` for a statement built once and bound per call: bind ownership_params(principal)."""
    return or_(bindparam("owner_admin", type_=Boolean), project_column == bindparam("owner_project", type_=Project.__table__.c.id.type))


def ownership_params(principal: Principal) -> dict[str, Any]:
    return {"owner_admin": principal.admin, "owner_project": principal.project_id}


def readable_dataset(principal: Principal) -> ColumnElement[bool]:
    """Datasets the caller may read and run against: its project's and the shared ones."""
    return true() if principal.admin else or_(Dataset.project_id == principal.project_id, Dataset.shared.is_(True))


def tests_hidden(principal: Principal, dataset_project: Any, dataset_hidden: Any, problem_hidden: Any) -> ColumnElement[bool]:
    """Whether a problem's tests are hidden from the caller: they are marked hidden (on the problem or its
    dataset) and the caller is not the dataset's project (nor an operator)."""
    if principal.admin:
        return false()
    return and_(dataset_project != principal.project_id, or_(dataset_hidden, problem_hidden))
