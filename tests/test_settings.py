"""Production refuses to start without real secrets; development says loudly what it is."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from service.core.settings import Settings

GOOD_SECRET = "x" * 40
GOOD_URL = "postgresql://passk:Zq8f3LkP0vR7tY2u@db:5432/passk"


def test_production_needs_a_database_url() -> None:
    with pytest.raises(ValidationError, match="PASSK_DATABASE_URL must be set"):
        Settings(env="production", secret_key=GOOD_SECRET)


@pytest.mark.parametrize("password", ["", "postgres", "password", "changeme"])
def test_production_refuses_placeholder_database_passwords(password: str) -> None:
    with pytest.raises(ValidationError, match="placeholder password"):
        Settings(env="production", secret_key=GOOD_SECRET, database_url=f"postgresql://passk:{password}@db/passk")


@pytest.mark.parametrize("secret", [None, "", "changeme", "short"])
def test_production_refuses_missing_or_weak_secret_keys(secret: str | None) -> None:
    with pytest.raises(ValidationError, match="PASSK_SECRET_KEY"):
        Settings(env="production", database_url=GOOD_URL, secret_key=secret)


def test_production_with_real_secrets_starts() -> None:
    settings = Settings(env="production", database_url=GOOD_URL, secret_key=GOOD_SECRET)
    assert settings.session_secret() == GOOD_SECRET


def test_development_uses_a_random_per_process_secret() -> None:
    first, second = Settings(env="development"), Settings(env="development")
    assert first.session_secret() == second.session_secret() and len(first.session_secret()) >= 32


def test_development_mode_is_announced(caplog: pytest.LogCaptureFixture) -> None:
    from service.api.app import create_app

    create_app(Settings(env="development", database_url=GOOD_URL))
    assert any("DEVELOPMENT mode" in record.getMessage() for record in caplog.records)


def test_sandbox_base_image_and_cpu_weight_are_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read through Settings and handed to the sandbox package (which reads no environment of its own)."""
    from sandbox.container import SANDBOX_CPU_SHARES
    from sandbox.executor import SandboxSettings

    defaults = Settings()
    assert (defaults.sandbox_base_image, defaults.sandbox_cpu_shares) == (None, SANDBOX_CPU_SHARES)
    assert SandboxSettings(image="x").cpu_shares == SANDBOX_CPU_SHARES
    monkeypatch.setenv("PASSK_SANDBOX_BASE_IMAGE", "python:3.11-slim-bookworm")
    monkeypatch.setenv("PASSK_SANDBOX_CPU_SHARES", "256")
    settings = Settings()
    assert (settings.sandbox_base_image, settings.sandbox_cpu_shares) == ("python:3.11-slim-bookworm", 256)
    with pytest.raises(ValidationError):
        Settings(sandbox_cpu_shares=1)


def test_deb_cache_is_a_setting_passed_to_the_image_builder(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """PASSK_DEB_CACHE goes through Settings; sandbox/images.py takes the cache as a parameter (npm beside it)."""
    import inspect

    from sandbox import images

    assert Settings().deb_cache is None
    monkeypatch.setenv("PASSK_DEB_CACHE", str(tmp_path / "debs"))
    assert Settings().deb_cache == tmp_path / "debs"
    assert "PASSK_DEB_CACHE" not in inspect.getsource(images)
    for function in (images.ensure_language_image, images.build_language_image):
        assert "deb_cache" in inspect.signature(function).parameters
    key = images.hashlib.sha256(images.json.dumps(["left-pad"]).encode()).hexdigest()[:16]
    (tmp_path / "npm" / key).mkdir(parents=True)
    (tmp_path / "npm" / key / ".complete").write_text("left-pad\n")
    assert images.npm_tarballs(("left-pad",), tmp_path / "debs") == tmp_path / "npm" / key
