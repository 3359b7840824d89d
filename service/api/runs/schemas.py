"""Request and response bodies for runs and their samples."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    model_validator,
)

from sandbox.verdicts import Verdict
from service.core.flags import FLAGS
from service.formats.fields import Key, PositiveMB, PositiveSeconds, StorableStr, jsonb_storable
from service.core.states import CallbackState, RunPriority, RunState, SampleState

# Strict so the stored sampling is what was sent: 1 stays 1, "0.7" is refused rather than converted.
NonNegative = Annotated[StrictInt, Field(ge=0)] | Annotated[StrictFloat, Field(ge=0, allow_inf_nan=False)]
UnitInterval = Annotated[StrictInt, Field(gt=0, le=1)] | Annotated[StrictFloat, Field(gt=0, le=1)]
Probability = Annotated[StrictInt, Field(ge=0, le=1)] | Annotated[StrictFloat, Field(ge=0, le=1, allow_inf_nan=False)]
Count = Annotated[StrictInt, Field(ge=0, le=2**31 - 1)]
Currency = Annotated[str, Field(pattern=r"^[A-Z]{3}$", description="ISO 4217 code, e.g. `USD`.")]
Step = Annotated[StrictInt, Field(ge=0, le=2**63 - 1, description="The training step of the checkpoint.")]


class Sampling(BaseModel):
    """How the completions were generated. Unknown keys are kept and stored verbatim."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "examples": [{"temperature": 0.8, "top_p": 0.95, "max_tokens": 512, "seed": 1234, "stop": ["\ndef "]}]
        },
    )

    temperature: NonNegative
    top_p: UnitInterval | None = None
    max_tokens: Annotated[StrictInt, Field(gt=0)] | None = None
    seed: StrictInt | None = None

    @model_validator(mode="after")
    def _storable_extras(self) -> Sampling:
        for key, value in (self.__pydantic_extra__ or {}).items():
            # Stored in JSONB verbatim: the one JSONB check, the datasets' (cases and the like).
            jsonb_storable(key, "sampling")
            jsonb_storable(value, f"sampling.{key}")
        return self

    def stored(self) -> dict[str, Any]:
        # exclude_unset: keys the client did not send are not invented (no "top_p": null).
        return self.model_dump(mode="json", exclude_unset=True)


class SampleIn(BaseModel):
    problem_id: Key = Field(description="The dataset's problem id (e.g. `HumanEval/0`).")
    completion: StorableStr = Field(description="Generated code appended to the prompt.")
    cost: NonNegative | None = Field(None, description="What generating this sample cost, in the run's `currency`.")
    latency_ms: NonNegative | None = Field(None, description="Generation latency in milliseconds.")
    input_tokens: Count | None = None
    output_tokens: Count | None = None
    confidence: Probability | None = Field(
        None, description="The model's own probability, in [0, 1], that this sample is correct (for calibration)."
    )
    steps: Count | None = Field(None, description="Agent steps or attempts it took to produce the sample.")


_RUN_CREATE_EXAMPLE = {
    "dataset_id": "6f1c2b1e-4a43-4f7a-9a55-0e4b4f1b2c3d",
    "model": "my-model-7b",
    "sampling": {"temperature": 0.8, "top_p": 0.95, "max_tokens": 512},
    "time_limit_s": 3.0,
    "cache": True,
    "samples": [
        {"problem_id": "HumanEval/0", "completion": "    return a + b\n"},
        {"problem_id": "HumanEval/0", "completion": "    return a - b\n"},
    ],
}


RunTag = Annotated[StorableStr, Field(min_length=1, max_length=100, pattern=r"^\S(.*\S)?$")]


class RunCreate(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [_RUN_CREATE_EXAMPLE]})

    dataset_id: uuid.UUID
    model: Key
    sampling: Sampling
    time_limit_s: PositiveSeconds | None = Field(None, description="Overrides the dataset's time limit.")
    memory_mb: PositiveMB | None = Field(None, description="Overrides the dataset's memory limit.")
    compile_time_limit_s: PositiveSeconds | None = Field(
        None, description="Compile time limit (CPU seconds): over the dataset's, then the language's default."
    )
    compile_memory_mb: PositiveMB | None = Field(
        None, description="Compile memory limit (MiB): over the dataset's, then the language's default."
    )
    cache: bool = Field(True, description="Reuse verdicts of identical programs under identical limits.")
    currency: Currency | None = Field(None, description="Currency of every sample's `cost`; required with costs.")
    display_name: Annotated[StorableStr, Field(max_length=300)] | None = Field(
        None, description="A name for people, shown instead of the model in lists (`PATCH` changes it later)."
    )
    tags: Annotated[list[RunTag], Field(max_length=50)] = Field(default_factory=list, description="The run's tags.")
    samples: list[SampleIn] = Field(min_length=1, description="Every sample of the run, in one request.")
    priority: RunPriority = Field(
        RunPriority.BATCH,
        description="`interactive` runs are claimed before `batch` ones; batch runs still get a share of the workers.",
    )
    callback_url: str | None = Field(
        None, max_length=2000,
        description="Called (POST, HMAC-signed) when the run completes, fails or is cancelled; retried with back-off.",
    )
    checkpoint: Annotated[StorableStr, Field(min_length=1, max_length=300)] | None = Field(
        None, description="The training checkpoint the samples came from (a name, e.g. `ckpt-2000`); needs `step`."
    )
    step: Step | None = Field(
        None, description="The checkpoint's training step: one model's runs on a dataset, ordered by step, are "
        "its progress over training (GET /v1/checkpoints)."
    )

    @model_validator(mode="after")
    def _checkpoint_with_step(self) -> RunCreate:
        if self.checkpoint is not None and self.step is None:
            raise ValueError(
                f"checkpoint {self.checkpoint!r} has no step: send `step` (its training step, an integer) too, "
                "so the run has its place among the model's checkpoints"
            )
        return self

    @model_validator(mode="after")
    def _currency_with_costs(self) -> RunCreate:
        if self.currency is None:
            for position, sample in enumerate(self.samples):
                if sample.cost is not None:
                    raise ValueError(
                        f"samples[{position}] (sample {position + 1}, counting from 1) has a cost but the run has "
                        "no currency: send `currency` "
                        "(an ISO 4217 code such as USD) with the run"
                    )
        return self


class VerdictCounts(BaseModel):
    passed: int = 0
    failed: int = 0
    error: int = 0
    timeout: int = 0
    memory: int = 0
    crashed: int = 0
    compile_error: int = 0  # a compiled language's program did not compile (counts in n, shown apart)
    sandbox_error: int = 0


assert set(VerdictCounts.model_fields) == {verdict.value for verdict in Verdict}


class StateCounts(BaseModel):
    queued: int = 0
    leased: int = 0
    done: int = 0
    cancelled: int = 0


def _flag_list() -> str:
    return "; ".join(f"`{name}`: {text}" for name, text in FLAGS.items())


class RewardHacks(BaseModel):
    """Samples whose program did what only a forger does, as the sandbox saw it (the reward-hack flags)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"samples": 3, "passed": 1, "by_flag": {"ended_early": 2, "out_of_turn": 0, "reached_judge": 1}}]
        }
    )

    samples: int = Field(0, description="Samples with at least one flag (a sample may carry several).")
    passed: int = Field(
        0, description="Flagged samples whose verdict is `passed` anyway (e.g. one that signalled the judge, then "
        "returned the right answer): rewards a forger was paid."
    )
    by_flag: dict[str, int] = Field(
        default_factory=lambda: dict.fromkeys(FLAGS, 0),
        description="Samples per flag, every known flag listed (0 included). The flags: " + _flag_list() + ".",
    )


class Progress(BaseModel):
    total: int
    done: int
    passed: int
    by_verdict: VerdictCounts
    by_state: StateCounts
    reward_hacks: RewardHacks = Field(
        default_factory=RewardHacks,
        description="The run's flagged samples so far: what an RL team whose rewards are these verdicts must watch. "
        "`GET /v1/runs/{id}/samples?flagged=true` lists them.",
    )


class Coverage(BaseModel):
    """Which part of its dataset a figure covers: a subset is never silently a whole dataset."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"problems": 40, "dataset_problems": 164, "subset": True, "text": "40 of 164 problems"}]}
    )

    problems: int = Field(description="Problems the figure covers.")
    dataset_problems: int = Field(description="Problems in the run's dataset.")
    subset: bool = Field(description="True when the figure covers part of the dataset only.")
    text: str = Field(description='"40 of 164 problems" for a subset, "all 164 problems" otherwise.')


def coverage(problems: int, dataset_problems: int) -> Coverage:
    subset = problems < dataset_problems
    if subset:
        text = f"{problems} of {dataset_problems} problems"
    else:
        text = f"all {dataset_problems} problems" if dataset_problems != 1 else "the 1 problem"
    return Coverage(problems=problems, dataset_problems=dataset_problems, subset=subset, text=text)


_RUN_EXAMPLE: dict[str, Any] = {
    "id": "0b7e8a9c-1d2e-4f30-8a1b-2c3d4e5f6a7b",
    "dataset_id": "6f1c2b1e-4a43-4f7a-9a55-0e4b4f1b2c3d",
    "model": "my-model-7b",
    "sampling": {"temperature": 0.8, "top_p": 0.95, "max_tokens": 512},
    "status": "running",
    "sample_count": 32800,
    "dataset_name": "HumanEval",
    "problem_count": 164,
    "coverage": {"problems": 164, "dataset_problems": 164, "subset": False, "text": "all 164 problems"},
    "display_name": "7b, nucleus 0.95",
    "note": None,
    "tags": ["baseline"],
    "archived": False,
    "time_limit_s": 3.0,
    "memory_mb": 512,
    "cache": True,
    "created_at": "2026-11-29T13:00:00Z",
    "started_at": "2026-11-29T13:00:01Z",
    "finished_at": None,
}


# The limits a run's samples get, as RunSummary reports them (service.api.runs.service resolves them in this order).
_EFFECTIVE = "Effective: the run's, else the dataset's, else the server default."
_EFFECTIVE_COMPILE = "Effective: the run's, else the dataset's, else the language's; null: not compiled."


class RunSummary(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [_RUN_EXAMPLE]})

    id: uuid.UUID
    dataset_id: uuid.UUID
    model: str
    sampling: dict[str, Any]
    status: RunState
    sample_count: int
    dataset_name: str
    problem_count: int = Field(description="Problems of the dataset the run has samples for.")
    coverage: Coverage = Field(description="The run's problems against its dataset's: flags a subset.")
    display_name: str | None = Field(None, description="A name for people; the model stays as submitted.")
    note: str | None = None
    tags: list[str] = Field(default_factory=list)
    archived: bool = Field(False, description="Archived runs leave the default list (`archived=true` shows them).")
    time_limit_s: float = Field(description=_EFFECTIVE)
    memory_mb: int = Field(description=_EFFECTIVE)
    compile_time_limit_s: float | None = Field(None, description=_EFFECTIVE_COMPILE)
    compile_memory_mb: int | None = Field(None, description=_EFFECTIVE_COMPILE)
    cache: bool
    currency: str | None = Field(None, description="Currency of the samples' `cost`.")
    checkpoint: str | None = Field(None, description="The training checkpoint the samples came from.")
    step: int | None = Field(None, description="The checkpoint's training step.")
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    priority: RunPriority = RunPriority.BATCH
    callback_url: str | None = None


class WebhookAttempt(BaseModel):
    event: str = Field(description="The run's status the call reported.")
    attempt: int
    status_code: int | None = Field(description="The receiver's HTTP status; null when no answer came.")
    error: str | None
    delivered: bool
    at: datetime


class Webhook(BaseModel):
    state: CallbackState | None = Field(description="null while the run is going; then pending, delivered or failed.")
    attempts: list[WebhookAttempt]


class RunRead(RunSummary):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    **_RUN_EXAMPLE,
                    "progress": {
                        "total": 32800,
                        "done": 1200,
                        "passed": 410,
                        "by_verdict": {**VerdictCounts().model_dump(), "passed": 410, "failed": 700, "timeout": 90},
                        "by_state": {"queued": 31536, "leased": 64, "done": 1200, "cancelled": 0},
                        "reward_hacks": {"samples": 3, "passed": 1,
                                         "by_flag": {"ended_early": 2, "out_of_turn": 0, "reached_judge": 1}},
                    },
                }
            ]
        }
    )

    progress: Progress
    webhook: Webhook | None = Field(None, description="With a callback_url: its state and every delivery attempt.")




class RunUpdate(BaseModel):
    """What people may change about a run: never its samples, model, sampling or results."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"display_name": "7b nucleus", "note": "after the tokenizer fix",
                                         "tags": ["baseline", "v2"], "archived": False}]},
    )

    display_name: Annotated[StorableStr, Field(max_length=300)] | None = Field(
        None, description="Shown instead of the model in lists; null clears it."
    )
    note: Annotated[StorableStr, Field(max_length=10_000)] | None = None
    tags: Annotated[list[RunTag], Field(max_length=50)] | None = Field(None, description="Replaces the run's tags.")
    archived: bool | None = Field(None, description="Archived runs leave the default list.")


class RunListItem(RunSummary):
    flagged_samples: int = Field(0, description="Samples flagged as reward hacks (see `progress.reward_hacks` of the run).")


class RunList(BaseModel):
    items: list[RunListItem]
    total: int
    limit: int
    offset: int


class SampleRead(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": 81234, "problem_id": "HumanEval/0", "index": 3, "state": "done", "verdict": "failed",
                    "attempts": 1, "duration_ms": 41.7, "cpu_ms": 30.2, "exit_code": 1, "signal": None,
                    "detail": "AssertionError", "stdout": "", "stderr": "Traceback (most recent call last): ...",
                    "stdout_truncated": False, "stderr_truncated": False, "finished_at": "2026-11-29T13:00:05Z",
                    "cached": False, "rerun": False, "completion": None, "flags": [],
                }
            ]
        }
    )

    id: int
    problem_id: str
    index: int
    state: SampleState
    verdict: Verdict | None
    attempts: int
    duration_ms: float | None
    cpu_ms: float | None
    exit_code: int | None
    signal: int | None
    detail: str | None
    stdout: str | None
    stderr: str | None
    traceback: str | None = Field(
        None, description="`stderr` without the frames of passk's own code (its judge, its value wire): the program's "
        "frames and error as they would read had it run alone; the same as `stderr` when it names none of them.",
    )
    stdout_truncated: bool
    stderr_truncated: bool
    finished_at: datetime | None
    cached: bool = Field(description="The verdict was taken from the result cache (an identical program under identical limits ran before).")
    rerun: bool = Field(description="A wall-clock timeout was re-run alone before the verdict became final.")
    completion: str | None = Field(None, description="Only with `include=completion`.")
    cost: float | None = Field(None, description="As sent, in the run's currency.")
    latency_ms: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    confidence: float | None = None
    steps: int | None = Field(None, description="Agent steps as sent (`attempts` counts sandbox executions).")
    failure: dict[str, Any] | None = Field(
        None,
        description=(
            "What failed: for humaneval/mbpp the first failing assertion (`line`, `source`, and `expected` / "
            "`actual` where plain values), for stdio/call the first failing case (`index`, `input`, `expected`, "
            "`got`, truncated). When the problem's tests are hidden from the caller (`hidden`), only `kind` "
            "(`assertion`, `case`) and the 0-based `index` of the failing assertion or case."
        ),
    )
    event: int | None = Field(
        None, description="This sample's event id (Last-Event-ID): ids grow in the order its run's events are sent, not by one."
    )
    hidden: bool = Field(
        False, description="The problem's tests are hidden from the caller (another project's dataset): `detail`, "
        "`stdout`, `stderr`, exit status, signal and timings are withheld, `failure` names the case and the kind only.",
    )
    flags: list[str] = Field(
        default_factory=list,
        description="Reward-hack flags: what only a forger does, as the sandbox saw this sample's program do it "
        "(empty when none; the verdict stands beside them, a flagged sample may have passed). " + _flag_list() + ".",
    )


class SamplePage(BaseModel):
    items: list[SampleRead]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last page.")
