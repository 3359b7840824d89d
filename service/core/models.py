"""The schema: datasets of problems, runs of samples. The samples table is also the work queue."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Identity,
    Index,
    Integer,
    Sequence,
    String,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID
from sqlalchemy.orm import Mapped, mapped_column

from sandbox.runtime.compare import POLICIES
from sandbox.verdicts import Verdict
from service.core.database import Base
from service.core.flags import check as flags_check
from service.core.states import ACTIVE_RUN_STATES, CallbackState, RunState, SampleState, sql_in as _in


def _is(column: str, value: str) -> str:
    return f"{column} = '{value}'"


class Project(Base):
    """A team: it owns its keys, datasets, runs, release rules and idempotency keys (service/projects)."""

    __tablename__ = "projects"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=uuid.uuid4)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


def _project_column() -> Mapped[uuid.UUID]:
    return mapped_column(ForeignKey("projects.id", ondelete="RESTRICT"))


class Dataset(Base):
    __tablename__ = "datasets"
    # Names are the project's: another project's dataset of the same name is another dataset (migration 0015).
    __table_args__ = (
        UniqueConstraint("project_id", "name", "digest"),
        Index("ix_datasets_project_name", "project_id", "name"),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=uuid.uuid4)
    project_id: Mapped[uuid.UUID] = _project_column()
    name: Mapped[str] = mapped_column(String(200))
    # Readable (and runnable) by every project, changed by its own only: a public benchmark.
    shared: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    # Every problem's tests hidden from other projects (a problem may hide its own: Problem.hidden_tests).
    hidden_tests: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    # sha256 over the canonical JSON of the problems; same content => same dataset.
    digest: Mapped[str] = mapped_column(String(64))
    problem_count: Mapped[int] = mapped_column(Integer)
    time_limit_s: Mapped[float | None] = mapped_column(Float)
    memory_mb: Mapped[int | None] = mapped_column(Integer)
    # The programs' language (sandbox/languages); its image runs them.
    language: Mapped[str] = mapped_column(String(32), server_default=text("'python'"))
    # Compile limits over the language's defaults (NULL: the language's; a run's override this).
    compile_time_limit_s: Mapped[float | None] = mapped_column(Float)
    compile_memory_mb: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Toolchain(Base):
    """The toolchain version a language's image reports; written by workers when they first use the image."""

    __tablename__ = "toolchains"

    language: Mapped[str] = mapped_column(String(32), primary_key=True)
    image: Mapped[str] = mapped_column(Text)
    version: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Problem(Base):
    __tablename__ = "problems"
    # `format` names a module of the format registry (service/formats/registry.py), which the dataset service
    # checks; like `language`, it has no CHECK, so adding a format needs no migration. The comparison
    # policies are the judge's (a new one needs a migration of this CHECK: tests/test_schema.py compares).
    __table_args__ = (
        UniqueConstraint("dataset_id", "key"),
        CheckConstraint(f"comparison IS NULL OR {_in('comparison', POLICIES)}", name="comparison"),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    dataset_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    # The user's problem id ("HumanEval/0"); `id` is internal.
    key: Mapped[str] = mapped_column(String(300))
    prompt: Mapped[str] = mapped_column(Text)
    test: Mapped[str] = mapped_column(Text)
    entry_point: Mapped[str] = mapped_column(String(300))
    canonical_solution: Mapped[str | None] = mapped_column(Text)
    tags: Mapped[list[str]] = mapped_column(ARRAY(Text), server_default=text("'{}'"))
    time_limit_s: Mapped[float | None] = mapped_column(Float)
    memory_mb: Mapped[int | None] = mapped_column(Integer)
    format: Mapped[str] = mapped_column(Text, server_default=text("'humaneval'"))
    # stdio: [{input, output}]; call: [{input: [args], output}]; NULL for the other formats.
    cases: Mapped[list[Any] | None] = mapped_column(JSONB(none_as_null=True))
    # Runs before the program: MBPP's test_setup_code, or imports a stdio/call dataset assumes.
    setup_code: Mapped[str | None] = mapped_column(Text)
    # stdio only; tolerances for `numeric` and for floats in call results (NULL: 1e-6).
    comparison: Mapped[str | None] = mapped_column(Text)
    abs_tol: Mapped[float | None] = mapped_column(Float)
    rel_tol: Mapped[float | None] = mapped_column(Float)
    # This problem's tests are hidden from other projects even when its dataset's are not (migration 0015).
    hidden_tests: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))


def claim_key(table: str | None = None) -> str:
    """A run's API key as the queue orders runs by it (ix_runs_claim_order), in SQL; `table`: the runs' alias. Runs
    made without a key share the nil UUID, so that one btree holds every key, including none, and its keys can be
    walked one after the other."""
    column = f"{table}.api_key_id" if table else "api_key_id"
    return f"coalesce({column}, '00000000-0000-0000-0000-000000000000'::uuid)"


class Run(Base):
    __tablename__ = "runs"
    __table_args__ = (
        CheckConstraint(_in("status", RunState), name="status"),
        Index("ix_runs_created_at", "created_at"),
        Index("ix_runs_project_created_at", "project_id", "created_at"),
        Index("ix_runs_tags", "tags", postgresql_using="gin"),
        # One model's checkpoints on one dataset, by step (migration 0016).
        Index("ix_runs_checkpoints", "project_id", "model", "dataset_id", "step",
              postgresql_where=text("step IS NOT NULL")),
        # Runs with work left: the queue picks among these (migration 0008).
        Index("ix_runs_active", "created_at", postgresql_where=text(_in("status", ACTIVE_RUN_STATES))),
        # The claim's candidates: each key's active runs of each priority, oldest first (migration 0022). The key
        # leads: a statement that looks for runs by priority alone (the claim's other runs of a problem) must not
        # take this index for a way to read them.
        Index("ix_runs_claim_order", text(claim_key()), "priority", "created_at", "id",
              postgresql_where=text(_in("status", ACTIVE_RUN_STATES))),
        # A project's streams, and the stream runs retention has yet to prune (migration 0020).
        Index("ix_runs_stream", "project_id", "stream", "created_at", postgresql_where=text("stream IS NOT NULL")),
        Index("ix_runs_stream_unpruned", "finished_at",
              postgresql_where=text("stream IS NOT NULL AND pruned_at IS NULL")),
        Index(
            "ix_runs_callback_pending", "finished_at",
            postgresql_where=text(_in("callback_state", (CallbackState.PENDING, CallbackState.DELIVERING))),
        ),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=uuid.uuid4)
    # The submitter's project (the dataset may be another project's shared one).
    project_id: Mapped[uuid.UUID] = _project_column()
    dataset_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("datasets.id", ondelete="RESTRICT"))
    model: Mapped[str] = mapped_column(String(300))
    # Stored verbatim: temperature, top_p, max_tokens, seed and whatever else defines the number.
    sampling: Mapped[dict[str, Any]] = mapped_column(JSONB)
    time_limit_s: Mapped[float | None] = mapped_column(Float)
    memory_mb: Mapped[int | None] = mapped_column(Integer)
    compile_time_limit_s: Mapped[float | None] = mapped_column(Float)
    compile_memory_mb: Mapped[int | None] = mapped_column(Integer)
    use_cache: Mapped[bool] = mapped_column(Boolean, server_default=text("true"))
    status: Mapped[str] = mapped_column(String(16), server_default=text(repr(str(RunState.QUEUED))))
    sample_count: Mapped[int] = mapped_column(Integer)
    # Problems of the dataset the run has samples for: "40 of 164 problems".
    problem_count: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Run management (editable with PATCH /v1/runs/{id}); archived runs leave the default list.
    display_name: Mapped[str | None] = mapped_column(String(300))
    note: Mapped[str | None] = mapped_column(Text)
    tags: Mapped[list[str]] = mapped_column(ARRAY(Text), server_default=text("'{}'"))
    archived: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    # ISO 4217 code of every sample's `cost` (migration 0006).
    currency: Mapped[str | None] = mapped_column(String(3))
    # The training checkpoint the samples came from (migration 0016): its name and its step, which orders a
    # model's runs on a dataset over training.
    checkpoint: Mapped[str | None] = mapped_column(String(300))
    step: Mapped[int | None] = mapped_column(BigInteger)
    # Delivery (migration 0007): RunPriority, the submitting key (fairness, ceilings), the webhook and
    # its state (CallbackState).
    priority: Mapped[str] = mapped_column(String(16), server_default=text("'batch'"))
    api_key_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    callback_url: Mapped[str | None] = mapped_column(Text)
    callback_state: Mapped[str | None] = mapped_column(String(16))
    callback_claimed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Migration 0020: the stream a /run_code or /v1/judge run belongs to (service/api/streams), and when
    # retention deleted its programs and outputs (its verdicts and timings stay).
    stream: Mapped[str | None] = mapped_column(String(200))
    pruned_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


# Migration 0019: the samples' event ids, one sequence for every run (service/worker/results.py, event_id).
SAMPLE_EVENTS = Sequence("sample_events", metadata=Base.metadata)


class Sample(Base):
    __tablename__ = "samples"
    __table_args__ = (
        CheckConstraint(_in("state", SampleState), name="state"),
        CheckConstraint(f"verdict IS NULL OR {_in('verdict', Verdict)}", name="verdict"),
        CheckConstraint(f"({_is('state', SampleState.DONE)}) = (verdict IS NOT NULL)", name="done_has_verdict"),
        # Progress, metrics and per-problem listings read everything through this index.
        Index("ix_samples_run_problem", "run_id", "problem_id", postgresql_include=["state", "verdict"]),
        # The queue: claimable rows only, so the indexes stay small however large the table grows (migration
        # 0011 dropped the one on id alone, which the planner took for a run's first sample).
        Index("ix_samples_queued_group", "run_id", "problem_id", "id", postgresql_where=text(_is("state", SampleState.QUEUED))),
        Index("ix_samples_leased", "lease_expires_at", postgresql_where=text(_is("state", SampleState.LEASED))),
        # A run's leased samples, newest lease last (migration 0023): the end-of-run check asks for the newest, the
        # likeliest to be still out while anything of the run is.
        Index("ix_samples_leased_run", "run_id", "lease_expires_at",
              postgresql_where=text(_is("state", SampleState.LEASED))),
        # Migration 0008: queued work by run and by problem (the claim), and a run's events in order.
        Index("ix_samples_queued_run", "run_id", "id", postgresql_where=text(_is("state", SampleState.QUEUED))),
        Index("ix_samples_queued_problem", "problem_id", "id", postgresql_where=text(_is("state", SampleState.QUEUED))),
        Index("ix_samples_run_event", "run_id", "event", postgresql_where=text("event IS NOT NULL")),
        # Migration 0012: reward-hack flags (service/core/flags.py), and a run's flagged samples without a scan of its
        # samples (counts are an index-only scan; the sample listing's `flagged` filter walks it by id).
        CheckConstraint(flags_check("flags"), name="flags"),
        Index("ix_samples_flagged", "run_id", "id", postgresql_include=["verdict", "flags"],
              postgresql_where=text("flags IS NOT NULL")),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    problem_id: Mapped[int] = mapped_column(ForeignKey("problems.id", ondelete="RESTRICT"))
    # Position of the sample among the run's samples for the same problem (0-based).
    index: Mapped[int] = mapped_column(Integer)
    completion: Mapped[str] = mapped_column(Text)

    state: Mapped[str] = mapped_column(String(16), server_default=text(repr(str(SampleState.QUEUED))))
    attempts: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    lease_owner: Mapped[str | None] = mapped_column(String(200))
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    verdict: Mapped[str | None] = mapped_column(String(16))
    duration_ms: Mapped[float | None] = mapped_column(Float)
    cpu_ms: Mapped[float | None] = mapped_column(Float)
    exit_code: Mapped[int | None] = mapped_column(Integer)
    signal: Mapped[int | None] = mapped_column(Integer)
    detail: Mapped[str | None] = mapped_column(Text)
    stdout: Mapped[str | None] = mapped_column(Text)
    stderr: Mapped[str | None] = mapped_column(Text)
    stdout_truncated: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    stderr_truncated: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The verdict came from the result cache, not from running this sample.
    cached: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    # A wall-clock timeout under load is re-run once alone before it is final.
    rerun: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))

    # What generating the sample took, as the client sent it (migration 0006; all optional).
    # `attempts` above counts sandbox executions; an agent's own count is `steps`.
    cost: Mapped[float | None] = mapped_column(Float)
    latency_ms: Mapped[float | None] = mapped_column(Float)
    input_tokens: Mapped[int | None] = mapped_column(Integer)
    output_tokens: Mapped[int | None] = mapped_column(Integer)
    confidence: Mapped[float | None] = mapped_column(Float)
    steps: Mapped[int | None] = mapped_column(Integer)
    # Migration 0007: the sample's event id (set when its verdict is recorded; from SAMPLE_EVENTS since 0019),
    # and what failed: the judge's record of the first failing assertion or case (sandbox/runtime/failure.py; the
    # shapes are SampleRead.failure's).
    event: Mapped[int | None] = mapped_column(BigInteger)
    failure: Mapped[dict[str, Any] | None] = mapped_column(JSONB(none_as_null=True))
    # What only a forger does, as the sandbox saw this sample's program do it (service/core/flags.py); NULL when none.
    flags: Mapped[list[str] | None] = mapped_column(ARRAY(Text))


class VerdictCache(Base):
    """One verdict per key: sha256 of program bytes, limits and sandbox image id."""

    __tablename__ = "verdict_cache"
    __table_args__ = (
        CheckConstraint(flags_check("flags"), name="flags"),
        Index("ix_verdict_cache_created_at", "created_at"),  # retention: service/worker/retention.py
    )

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    verdict: Mapped[str] = mapped_column(String(16))
    failure: Mapped[dict[str, Any] | None] = mapped_column(JSONB(none_as_null=True))
    detail: Mapped[str | None] = mapped_column(Text)
    exit_code: Mapped[int | None] = mapped_column(Integer)
    signal: Mapped[int | None] = mapped_column(Integer)
    duration_ms: Mapped[float | None] = mapped_column(Float)
    cpu_ms: Mapped[float | None] = mapped_column(Float)
    stdout: Mapped[str | None] = mapped_column(Text)
    stderr: Mapped[str | None] = mapped_column(Text)
    stdout_truncated: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    stderr_truncated: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    flags: Mapped[list[str] | None] = mapped_column(ARRAY(Text))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class ApiKey(Base):
    """An API key: only its sha256 is stored; `prefix` finds the row without a scan."""

    __tablename__ = "api_keys"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=uuid.uuid4)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="RESTRICT"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    prefix: Mapped[str] = mapped_column(String(16), unique=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    scopes: Mapped[list[str]] = mapped_column(ARRAY(Text))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class DashboardSession(Base):
    """A dashboard login: the cookie names this row, so logging out or revoking it ends the session here and
    not when the cookie would have expired."""

    __tablename__ = "dashboard_sessions"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=uuid.uuid4)
    key_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), ForeignKey("api_keys.id", ondelete="CASCADE"), index=True)
    user_agent: Mapped[str | None] = mapped_column(String(300))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class WorkerHeartbeat(Base):
    """One row per worker process, for GET /v1/status: live while expires_at is in the future."""

    __tablename__ = "worker_heartbeats"

    owner: Mapped[str] = mapped_column(String(200), primary_key=True)
    hostname: Mapped[str] = mapped_column(String(200))
    pid: Mapped[int] = mapped_column(Integer)
    threads: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # Counters since the worker started: samples it recorded, and sandbox errors among them (retried or not).
    processed: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    sandbox_errors: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    # Whether the worker's Docker engine answered at its last heartbeat (it claims nothing while it does not).
    engine_up: Mapped[bool] = mapped_column(Boolean, server_default=text("true"))


# Operations status (migration 0004): recent finishes and sandbox errors are range scans, not table scans.
Index("ix_samples_finished_at", Sample.finished_at, postgresql_where=text("finished_at IS NOT NULL"))
Index("ix_samples_sandbox_errors", Sample.finished_at, postgresql_where=text(_is("verdict", Verdict.SANDBOX_ERROR)))


class IdempotencyRecord(Base):
    """The response given to a POST with an Idempotency-Key, replayed when the client retries."""

    __tablename__ = "idempotency_keys"
    # One namespace per project: a retry with another of the project's keys replays too (migration 0015).
    __table_args__ = (UniqueConstraint("project_id", "key"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    api_key_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("api_keys.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(200))
    endpoint: Mapped[str] = mapped_column(String(200))
    request_sha256: Mapped[str] = mapped_column(String(64))
    status_code: Mapped[int | None] = mapped_column(Integer)
    response: Mapped[Any | None] = mapped_column(JSONB)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class ReleaseRule(Base):
    """A named release rule, written before the candidate's run and never changed (migration 0006)."""

    __tablename__ = "release_rules"
    __table_args__ = (UniqueConstraint("project_id", "name"),)

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=uuid.uuid4)
    project_id: Mapped[uuid.UUID] = _project_column()
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(Text)
    # [{metric, k?, limit, threshold}], see service/api/release/schemas.py
    clauses: Mapped[list[Any]] = mapped_column(JSONB)
    confidence: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class WebhookDelivery(Base):
    """One attempt to call a run's callback_url (migration 0007)."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (Index("ix_webhook_deliveries_run_id", "run_id", "id"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    event: Mapped[str] = mapped_column(String(16))
    attempt: Mapped[int] = mapped_column(Integer)
    status_code: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)
    delivered: Mapped[bool] = mapped_column(Boolean)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
