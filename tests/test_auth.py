"""Every /v1 route needs a key with the right scope; keys are stored hashed; the dashboard cookie works."""

from __future__ import annotations

import uuid

import httpx
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from service.api.app import create_app
from service.api.auth.cache import VerifiedKeys, forget_everywhere
from service.api.auth.repository import create_key, revoke_key
from service.api.dependencies import get_session
from service.core.settings import Settings
from service.api.auth.principal import Principal
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


async def test_a_key_as_basic_credentials_is_accepted(anonymous_client: httpx.AsyncClient, api_key: str) -> None:
    """`http://passk:<key>@host/...`: clients such as requests send the URL's credentials as HTTP Basic."""
    assert (await anonymous_client.get("/v1/datasets", auth=("passk", api_key))).status_code == 200
    assert (await anonymous_client.get("/v1/datasets", auth=("anyone", api_key))).status_code == 200
    assert (await anonymous_client.get("/v1/datasets", auth=("passk", "pk_000000000000_nope"))).status_code == 401
    malformed = await anonymous_client.get("/v1/datasets", headers={"Authorization": "Basic %%%"})
    assert malformed.status_code == 401


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


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def _revoke_elsewhere(db_session: AsyncSession, key_id: object) -> None:
    """What `passk keys revoke` in another process does: the row only, this process's caches untouched."""
    await db_session.execute(text("UPDATE api_keys SET revoked_at = now() WHERE id = :id"), {"id": key_id})
    await db_session.commit()


async def test_a_key_revoked_elsewhere_is_refused_once_its_cache_entry_expires(
    app: FastAPI, anonymous_client: httpx.AsyncClient, db_session: AsyncSession
) -> None:
    clock = _Clock()
    app.state.verified_keys = VerifiedKeys(app.state.settings.api_key_cache_s, clock=clock)
    key, raw = await db_session.run_sync(lambda s: create_key(s, "revoked elsewhere", ["read"]))
    await db_session.commit()
    headers = {"Authorization": f"Bearer {raw}"}
    assert (await anonymous_client.get("/v1/datasets", headers=headers)).status_code == 200
    await _revoke_elsewhere(db_session, key.id)
    # Within the cache's lifetime this process still trusts the key it verified (the documented lag)...
    clock.now += app.state.settings.api_key_cache_s - 0.5
    assert (await anonymous_client.get("/v1/datasets", headers=headers)).status_code == 200
    # ...and asks the database again once it expires.
    clock.now += 1.0
    refused = await anonymous_client.get("/v1/datasets", headers=headers)
    assert refused.status_code == 401 and refused.json()["detail"] == "invalid or revoked API key"


async def test_a_session_cookie_of_a_key_revoked_elsewhere_ends_when_its_cache_entry_expires(
    app: FastAPI, anonymous_client: httpx.AsyncClient, db_session: AsyncSession
) -> None:
    clock = _Clock()
    app.state.verified_keys = VerifiedKeys(5.0, clock=clock)
    key, raw = await db_session.run_sync(lambda s: create_key(s, "cookie", ["read"]))
    await db_session.commit()
    cookie = (await anonymous_client.post("/v1/session", json={"api_key": raw})).cookies["passk_session"]
    assert (await anonymous_client.get("/v1/datasets", cookies={"passk_session": cookie})).status_code == 200
    await _revoke_elsewhere(db_session, key.id)
    assert (await anonymous_client.get("/v1/datasets", cookies={"passk_session": cookie})).status_code == 200
    clock.now += 5.0
    assert (await anonymous_client.get("/v1/datasets", cookies={"passk_session": cookie})).status_code == 401


async def test_without_a_key_cache_revocation_elsewhere_is_immediate(
    settings: Settings, db_session: AsyncSession
) -> None:
    app = create_app(settings.model_copy(update={"api_key_cache_s": 0.0}))
    app.dependency_overrides[get_session] = lambda: db_session
    key, raw = await db_session.run_sync(lambda s: create_key(s, "uncached", ["read"]))
    await db_session.commit()
    headers = {"Authorization": f"Bearer {raw}"}
    async with app.router.lifespan_context(app), httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test"
    ) as client:
        assert (await client.get("/v1/datasets", headers=headers)).status_code == 200
        await _revoke_elsewhere(db_session, key.id)
        assert (await client.get("/v1/datasets", headers=headers)).status_code == 401


def test_the_key_cache_keeps_only_its_newest_entries_and_forgets_a_revoked_key() -> None:
    cache: VerifiedKeys[Principal] = VerifiedKeys(60.0, kept=2)
    principals = [Principal(uuid.uuid4(), f"k{i}", frozenset({"read"}), uuid.uuid4(), "p") for i in range(3)]
    for i, principal in enumerate(principals):
        cache.put(cache.of_raw(f"raw{i}"), principal)
    assert cache.get(cache.of_raw("raw0")) is None
    assert cache.get(cache.of_raw("raw2")) == principals[2]
    session_id = uuid.uuid4()
    cache.put(cache.of_session(session_id), principals[2])
    forget_everywhere(principals[2].key_id)
    assert cache.get(cache.of_raw("raw2")) is None and cache.get(cache.of_session(session_id)) is None


async def _login(client: httpx.AsyncClient, raw: str, agent: str = "tests") -> str:
    response = await client.post("/v1/session", json={"api_key": raw}, headers={"User-Agent": agent})
    assert response.status_code == 200, response.text
    client.cookies.clear()  # each request below names the cookie it sends
    return response.cookies["passk_session"]


async def test_logout_ends_the_session_on_the_server(anonymous_client: httpx.AsyncClient, api_key: str) -> None:
    """The cookie a browser had before logging out no longer works, though its signature and expiry are good."""
    cookie = await _login(anonymous_client, api_key)
    assert (await anonymous_client.get("/v1/datasets", cookies={"passk_session": cookie})).status_code == 200
    logout = await anonymous_client.delete("/v1/session", cookies={"passk_session": cookie})
    assert logout.status_code == 204 and 'passk_session=""' in logout.headers["set-cookie"]
    assert (await anonymous_client.get("/v1/datasets", cookies={"passk_session": cookie})).status_code == 401
    # Logging out without a session, or twice, is still a 204.
    assert (await anonymous_client.delete("/v1/session", cookies={"passk_session": cookie})).status_code == 204
    assert (await anonymous_client.delete("/v1/session")).status_code == 204


async def test_a_keys_sessions_are_listed_and_ended_by_that_key_only(
    anonymous_client: httpx.AsyncClient, db_session: AsyncSession
) -> None:
    _, reader = await db_session.run_sync(lambda s: create_key(s, "reader", ["read"]))
    _, other = await db_session.run_sync(lambda s: create_key(s, "other", ["read", "submit"]))
    await db_session.commit()
    laptop, phone = await _login(anonymous_client, reader, "laptop"), await _login(anonymous_client, reader, "phone")
    await _login(anonymous_client, other, "elsewhere")
    listed = await anonymous_client.get("/v1/sessions", cookies={"passk_session": laptop})
    assert listed.status_code == 200
    rows = {row["user_agent"]: row for row in listed.json()}
    assert set(rows) == {"laptop", "phone"} and rows["laptop"]["current"] and not rows["phone"]["current"]
    by_key = await anonymous_client.get("/v1/sessions", headers={"Authorization": f"Bearer {reader}"})
    assert {row["user_agent"] for row in by_key.json()} == {"laptop", "phone"}
    assert not any(row["current"] for row in by_key.json())
    # Another key cannot end them (and learns nothing: 404); their own read-only key can.
    phone_id = rows["phone"]["id"]
    stranger = await anonymous_client.delete(f"/v1/sessions/{phone_id}", headers={"Authorization": f"Bearer {other}"})
    assert stranger.status_code == 404
    assert (await anonymous_client.get("/v1/datasets", cookies={"passk_session": phone})).status_code == 200
    ended = await anonymous_client.delete(f"/v1/sessions/{phone_id}", cookies={"passk_session": laptop})
    assert ended.status_code == 204
    assert (await anonymous_client.get("/v1/datasets", cookies={"passk_session": phone})).status_code == 401
    assert (await anonymous_client.get("/v1/datasets", cookies={"passk_session": laptop})).status_code == 200
    again = await anonymous_client.delete(f"/v1/sessions/{phone_id}", cookies={"passk_session": laptop})
    assert again.status_code == 404
    assert (await anonymous_client.get("/v1/sessions")).status_code == 401


async def test_session_cookies_are_secure_over_tls(app: FastAPI, api_key: str) -> None:
    """Secure whenever the request came over TLS, in development too; httponly and SameSite=Strict always."""
    for base, secure in (("https://test", True), ("http://test", False)):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base) as client:
            response = await client.post("/v1/session", json={"api_key": api_key})
        attributes = response.headers["set-cookie"].lower()
        assert ("; secure" in attributes) is secure, (base, attributes)
        assert "httponly" in attributes and "samesite=strict" in attributes
