"""Response of GET /v1/languages/compare."""

from __future__ import annotations

import uuid

from pydantic import BaseModel, Field

from service.api.metrics.schemas import IntervalMethod
from service.core.estimates import IntervalOut


class KPoint(BaseModel):
    k: int
    pass_at_k: IntervalOut


class LanguageRow(BaseModel):
    language: str
    toolchain: str | None = Field(None, description="The toolchain version its image reported (null until used).")
    run_id: uuid.UUID
    dataset_id: uuid.UUID
    dataset_name: str
    problems: int = Field(description="Finished problems of the run that count here.")
    pass_at_k: list[KPoint]


class AverageRow(BaseModel):
    label: str = Field(description="What this average is: micro (pooled problems) or macro (mean of languages).")
    problems: int
    pass_at_k: list[KPoint]


class PairingOut(BaseModel):
    """Which problems are one problem translated, resampled together by the micro and macro intervals."""

    rule: str = Field(description="How problems are matched across languages.")
    joint: bool = Field(
        description="Some problem is in two languages or more: the averages resample such problems together (a "
        "hard problem is hard in every language); false: the languages are independent strata."
    )
    units: int = Field(description="Resampling units of the averages: shared problems plus unmatched ones.")
    paired: list[str] = Field(description="The shared problems (by key), each in two languages or more.")
    unmatched: dict[str, list[str]] = Field(
        description="Per language, its problems (by id) that match no problem of another language."
    )


class LanguageComparison(BaseModel):
    model: str
    ks: list[int]
    confidence: float
    method: IntervalMethod
    resamples: int
    seed: int
    languages: list[LanguageRow] = Field(description="One row per language, sorted by language.")
    micro: AverageRow
    macro: AverageRow
    pairing: PairingOut | None = Field(None, description="Which problems the averages resample together.")
    warnings: list[str] = Field(default_factory=list)
