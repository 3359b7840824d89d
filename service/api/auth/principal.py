"""Who is calling: the auth subject every service and repository takes, carrying the caller's project.

Ownership is decided from it in one place (service/projects/ownership.py): a project sees its own objects (and
datasets other projects share); a key with the `admin` scope sees every project's.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

ADMIN = "admin"


@dataclass(frozen=True)
class Principal:
    key_id: uuid.UUID | None
    name: str
    scopes: frozenset[str]
    project_id: uuid.UUID
    project: str

    @property
    def admin(self) -> bool:
        """An operator's key: every project's objects are its to read and change."""
        return ADMIN in self.scopes

    def has(self, scope: str) -> bool:
        return scope in self.scopes or self.admin

    def owns(self, project_id: uuid.UUID) -> bool:
        """Whether an object of `project_id` is this caller's own (an operator owns everything)."""
        return self.admin or project_id == self.project_id


# passk's own background work (webhook payloads): sees every project, acts for none. Never a request's caller.
SYSTEM = Principal(key_id=None, name="passk", scopes=frozenset({ADMIN}), project_id=uuid.UUID(int=0), project="")
