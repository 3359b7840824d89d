"""HTTP route: one model's runs in several languages side by side."""

from __future__ import annotations

from fastapi import APIRouter

from service.api.dependencies import SessionDep
from service.api.multirun import MultiRunDep, comparison_responses
from service.api.multilang import service as multilang_service
from service.api.multilang.schemas import LanguageComparison
from service.api.auth.dependencies import CallerDep

router = APIRouter(prefix="/v1/languages", tags=["languages"])


@router.get(
    "/compare",
    response_model=LanguageComparison,
    summary="One model's runs in several languages: pass@k per language, micro and macro averages, with intervals",
    description=(
        "One run per language, all of one model. Micro pools every problem of every language (bigger languages "
        "weigh more); macro is the unweighted mean of the per-language figures. Intervals: a bootstrap over "
        "problems, each language with its own derived seed. One problem translated (the same id after the language "
        "prefix: CPP/0, Go/0, HumanEval/0, HumanEval_0_<name>) is one unit for the averages, resampled in every "
        "language at once; `pairing` lists the matched problems and the warnings the unmatched ones."
    ),
    responses=comparison_responses("A run has no finished problem yet"),
)
async def compare_languages(session: SessionDep, principal: CallerDep, query: MultiRunDep) -> LanguageComparison:
    return await multilang_service.compare(session, principal, query)
