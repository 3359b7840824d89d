"""Response bodies for run metrics and per-problem results."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from service.runs.schemas import RunStatus, VerdictCounts

_INTERVAL_EXAMPLE = {
    "estimate": 0.412,
    "ci_low": 0.338,
    "ci_high": 0.488,
    "confidence": 0.95,
    "standard_error": 0.038,
    "method": "percentile",
    "resamples": 10000,
}


class IntervalOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [_INTERVAL_EXAMPLE]})

    estimate: float = Field(description="Mean over problems of the unbiased per-problem estimate.")
    ci_low: float
    ci_high: float
    confidence: float
    standard_error: float = Field(description="Standard deviation over problems / sqrt(problems).")
    method: str = Field(description="Bootstrap over problems (the sampling unit).")
    resamples: int


class KMetric(BaseModel):
    k: int
    pass_at_k: IntervalOut = Field(description="Chance that at least one of k samples passes.")
    pass_hat_k: IntervalOut = Field(description="pass^k: chance that all of k samples pass.")


class RunMetrics(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "run_id": "0b7e8a9c-1d2e-4f30-8a1b-2c3d4e5f6a7b",
                    "dataset_id": "6f1c2b1e-4a43-4f7a-9a55-0e4b4f1b2c3d",
                    "model": "my-model-7b",
                    "sampling": {"temperature": 0.8},
                    "status": "completed",
                    "partial": False,
                    "problems": 164,
                    "problems_finished": 164,
                    "problems_total": 164,
                    "samples": 32796,
                    "excluded_sandbox_errors": 4,
                    "n_min": 198,
                    "n_max": 200,
                    "seed": 0,
                    "metrics": [
                        {
                            "k": 1,
                            "pass_at_k": _INTERVAL_EXAMPLE,
                            "pass_hat_k": _INTERVAL_EXAMPLE,
                        }
                    ],
                    "note": None,
                }
            ]
        }
    )

    run_id: uuid.UUID
    dataset_id: uuid.UUID
    model: str
    sampling: dict[str, Any]
    status: RunStatus
    partial: bool = Field(description="True while some problems have samples that have not finished.")
    problems: int = Field(description="Problems the metrics are computed over (finished ones).")
    problems_finished: int
    problems_total: int
    samples: int = Field(description="Sum of n over those problems (sandbox errors excluded).")
    excluded_sandbox_errors: int = Field(description="Samples of those problems that failed for infrastructure reasons.")
    n_min: int | None
    n_max: int | None
    seed: int
    metrics: list[KMetric]
    note: str | None = None


class ProblemResult(BaseModel):
    problem_id: str
    n: int = Field(description="Finished samples, sandbox errors excluded.")
    c: int = Field(description="Passed samples.")
    done: bool = Field(description="All of the problem's samples have finished (or were cancelled).")
    total: int
    pending: int
    by_verdict: VerdictCounts
    pass_at_k: dict[str, float | None] = Field(description="Keyed by k; null where k > n.")
    pass_hat_k: dict[str, float | None] = Field(description="Keyed by k; null where k > n.")


class ProblemResults(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "run_id": "0b7e8a9c-1d2e-4f30-8a1b-2c3d4e5f6a7b",
                    "ks": [1, 10],
                    "problems": [
                        {
                            "problem_id": "HumanEval/0",
                            "n": 10,
                            "c": 3,
                            "done": True,
                            "total": 10,
                            "pending": 0,
                            "by_verdict": {**VerdictCounts().model_dump(), "passed": 3, "failed": 7},
                            "pass_at_k": {"1": 0.3, "10": 1.0},
                            "pass_hat_k": {"1": 0.3, "10": 0.0},
                        }
                    ],
                }
            ]
        }
    )

    run_id: uuid.UUID
    ks: list[int]
    problems: list[ProblemResult]
