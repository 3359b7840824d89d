"""`passk keys create|list|revoke` and `passk projects create|list`: API keys and the projects (teams) they
belong to, for operators (these talk to the database, not to the API). The raw key is printed once, never stored.
"""

from __future__ import annotations

import argparse
import sys
import uuid

from service.api.auth import repository
from service.api.auth.keys import ALL_SCOPES, SCOPES
from service.api.projects import repository as projects
from service.core.database import make_sync_engine, make_sync_sessionmaker, transaction
from service.core.embedded_postgres import resolve_database_url
from service.core.settings import Settings, get_settings


def _sessions(settings: Settings):  # noqa: ANN202  (a sessionmaker)
    return make_sync_sessionmaker(make_sync_engine(resolve_database_url(settings)))


def create_key(settings: Settings, name: str, scopes: list[str], project: str | None = None) -> str:
    """A new key of `project` (None: the default project); its raw value."""
    with transaction(_sessions(settings)) as session:
        _, raw = repository.create_key(session, name, scopes, project)
    return raw


def cmd_create(args: argparse.Namespace) -> int:
    try:
        print(create_key(get_settings(), args.name, args.scope or list(SCOPES), args.project))
    except projects.UnknownProject as exc:
        print(f"passk keys create: {exc}", file=sys.stderr)
        return 1
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    with transaction(_sessions(get_settings())) as session:
        for key, project in repository.list_keys(session, args.project):
            state = f"revoked {key.revoked_at:%Y-%m-%d}" if key.revoked_at else "active"
            print(f"{key.id}  pk_{key.prefix}_…  {project:16}  {','.join(key.scopes):18}  {state:18}  {key.name}")
    return 0


def cmd_revoke(args: argparse.Namespace) -> int:
    with transaction(_sessions(get_settings())) as session:
        revoked = repository.revoke_key(session, uuid.UUID(args.key_id))
    print("revoked" if revoked else "no active key with that id")
    return 0 if revoked else 1


def cmd_projects_create(args: argparse.Namespace) -> int:
    try:
        with transaction(_sessions(get_settings())) as session:
            project, created = projects.create_project(session, args.name)
            print(f"{'created' if created else 'exists:'} project {project.name} ({project.id})")
    except projects.BadProjectName as exc:
        print(f"passk projects create: {exc}", file=sys.stderr)
        return 1
    return 0


def cmd_projects_list(_args: argparse.Namespace) -> int:
    with transaction(_sessions(get_settings())) as session:
        for project, keys in projects.list_projects(session):
            print(f"{project.id}  {project.name:24}  {keys} active key{'s' if keys != 1 else ''}  "
                  f"created {project.created_at:%Y-%m-%d}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    keys = sub.add_parser("keys", help="manage API keys (operators)").add_subparsers(dest="keys_command", required=True)
    create = keys.add_parser("create", help="create a key and print it (once)")
    create.add_argument("--name", default="default")
    create.add_argument("--project", help=f"the project (team) the key acts for (default: {projects.DEFAULT_PROJECT})")
    create.add_argument("--scope", action="append", choices=ALL_SCOPES,
                        help="repeatable; default: read and submit. `admin` sees and changes every project's objects")
    create.set_defaults(func=cmd_create)
    listing = keys.add_parser("list", help="list keys (never their secrets)")
    listing.add_argument("--project", help="only this project's keys")
    listing.set_defaults(func=cmd_list)
    revoke = keys.add_parser("revoke", help="revoke a key by id")
    revoke.add_argument("key_id")
    revoke.set_defaults(func=cmd_revoke)

    project_commands = sub.add_parser("projects", help="manage projects, the teams that own keys, datasets and runs "
                                      "(operators)").add_subparsers(dest="projects_command", required=True)
    new = project_commands.add_parser("create", help="create a project (an existing name is left as it is)")
    new.add_argument("name")
    new.set_defaults(func=cmd_projects_create)
    project_commands.add_parser("list", help="list projects").set_defaults(func=cmd_projects_list)
