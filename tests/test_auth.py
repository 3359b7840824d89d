"""Every /v1 route needs a key with the right scope; keys are stored hashed; the dashboard cookie works."""

from __future__ import annotations

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from service.auth.repository import create_key, revoke_key
from tests.conftest import create_dataset


async def test_healthz_is_open_and_v1_is_not(anonymous_client: httpx.AsyncClient) -> None:
    assert (await anonymous_client.get("/healthz")).status_code == 200
    for method, path in (("GET", "/v1/datasets"), ("GET", "/v1/runs"), ("POST", "/v1/datasets"), ("POST", "/v1/runs")):
        response = await anonymous_client.request(method, path, json={})
        assert response.status_code == 401, (method, path, response.text)
        assert response.headers["www-authenticate"] == "Bearer"
        assert "API key" in response.json()["detail"]


async def test_bad_and_revoked_keys_are_refused(anonymous_client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    bad = await anonymous_client.get("/v1/datasets", headers={"Authorization": "Bearer pk_000000000000_nope"})
    assert bad.status_code == 401
    key, raw = await db_session.run_sync(lambda s: create_key(s, "soon revoked", ["read"]))
    await db_session.commit()
    assert (await anonymous_client.get("/v1/datasets", headers={"X-API-Key": raw})).status_code == 200
    await db_session.run_sync(lambda s: revoke_key(s, key.id))
    await db_session.commit()
    assert (await anonymous_client.get("/v1/datasets", headers={"X-API-Key": raw})).status_code == 401


async def test_scopes_separate_reading_from_submitting(anonymous_client: httpx.AsyncClient, db_session: AsyncSession) -> None:
    _, reader = await db_session.run_sync(lambda s: create_key(s, "reader", ["read"]))
    _, submitter = await db_session.run_sync(lambda s: create_key(s, "submitter", ["submit"]))
    await db_session.commit()
    as_reader = {"Authorization": f"Bearer {reader}"}
    denied = await anonymous_client.post("/v1/datasets", json={"name": "x", "problems": []}, headers=as_reader)
    assert denied.status_code == 403 and "submit" in denied.json()["detail"]
    assert (await anonymous_client.get("/v1/runs", headers=as_reader)).status_code == 200
    assert (await anonymous_client.get("/v1/runs", headers={"Authorization": f"Bearer {submitter}"})).status_code == 403


async def test_keys_are_stored_hashed(api_key: str, db_session: AsyncSession) -> None:
    rows = (await db_session.execute(text("SELECT prefix, secret_hash FROM api_keys"))).all()
    assert rows and all(api_key not in (row.prefix, row.secret_hash) and len(row.secret_hash) == 64 for row in rows)


async def test_session_cookie_login(anonymous_client: httpx.AsyncClient, api_key: str, client: httpx.AsyncClient) -> None:
    await create_dataset(client, ["a"])
    assert (await anonymous_client.post("/v1/session", json={"api_key": "pk_000000000000_wrong"})).status_code == 401
    login = await anonymous_client.post("/v1/session", json={"api_key": api_key})
    assert login.status_code == 200 and set(login.json()["scopes"]) == {"read", "submit"}
    cookie = login.cookies.get("passk_session")
    assert cookie and api_key not in cookie
    assert "httponly" in login.headers["set-cookie"].lower()
    listed = await anonymous_client.get("/v1/datasets", cookies={"passk_session": cookie})
    assert listed.status_code == 200
    forged = await anonymous_client.get("/v1/datasets", cookies={"passk_session": cookie[:-4] + "0000"})
    assert forged.status_code == 401
