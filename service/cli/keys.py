"""`passk keys create|list|revoke`: API keys for operators. The raw key is printed once, never stored."""

from __future__ import annotations

import argparse
import uuid

from service.api.auth import repository
from service.api.auth.keys import SCOPES
from service.core.database import make_sync_engine, make_sync_sessionmaker, transaction
from service.core.embedded_postgres import resolve_database_url
from service.core.settings import Settings, get_settings


def _sessions(settings: Settings):  # noqa: ANN202  (a sessionmaker)
    return make_sync_sessionmaker(make_sync_engine(resolve_database_url(settings)))


def create_key(settings: Settings, name: str, scopes: list[str]) -> str:
    with transaction(_sessions(settings)) as session:
        _, raw = repository.create_key(session, name, scopes)
    return raw


def cmd_create(args: argparse.Namespace) -> int:
    print(create_key(get_settings(), args.name, args.scope or list(SCOPES)))
    return 0


def cmd_list(_args: argparse.Namespace) -> int:
    with transaction(_sessions(get_settings())) as session:
        for key in repository.list_keys(session):
            state = f"revoked {key.revoked_at:%Y-%m-%d}" if key.revoked_at else "active"
            print(f"{key.id}  pk_{key.prefix}_…  {','.join(key.scopes):12}  {state:18}  {key.name}")
    return 0


def cmd_revoke(args: argparse.Namespace) -> int:
    with transaction(_sessions(get_settings())) as session:
        revoked = repository.revoke_key(session, uuid.UUID(args.key_id))
    print("revoked" if revoked else "no active key with that id")
    return 0 if revoked else 1


def register(sub: argparse._SubParsersAction) -> None:
    keys = sub.add_parser("keys", help="manage API keys").add_subparsers(dest="keys_command", required=True)
    create = keys.add_parser("create", help="create a key and print it (once)")
    create.add_argument("--name", default="default")
    create.add_argument("--scope", action="append", choices=SCOPES, help="repeatable; default: all scopes")
    create.set_defaults(func=cmd_create)
    keys.add_parser("list", help="list keys (never their secrets)").set_defaults(func=cmd_list)
    revoke = keys.add_parser("revoke", help="revoke a key by id")
    revoke.add_argument("key_id")
    revoke.set_defaults(func=cmd_revoke)
