"""HTTP routes for release rules."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response, status

from service.api.compare.service import CompareOptions
from service.formats.fields import StorableStr
from service.api.dependencies import SessionDep, openapi_error
from service.api.multirun import ResamplesQuery, SeedQuery, comparison_responses
from service.api.release import service as release_service
from service.api.release.schemas import ReleaseEvaluation, ReleaseRuleCreate, ReleaseRuleList, ReleaseRuleRead
from service.api.auth.dependencies import CallerDep

router = APIRouter(prefix="/v1/release-rules", tags=["release rules"])

_RULE_EXAMPLE = "release rule 'ship-gate-v1'"
_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: openapi_error("No such rule", {"detail": f"{_RULE_EXAMPLE} not found"})
}
RuleRef = Annotated[StorableStr, Path(max_length=300, description="The rule's name or id")]


@router.post(
    "",
    response_model=ReleaseRuleRead,
    status_code=status.HTTP_201_CREATED,
    summary="Store a named release rule (immutable)",
    description=(
        "Write the rule down before the candidate's run: each clause bounds one figure on one side "
        "(`max_drop`, `max_increase`, `max_relative_increase` on candidate - base; `max`, `min` on the candidate's "
        "own value). Its `created_at` is kept, so a verdict can show that the rule predates the run. The same "
        "name with the same content again returns the stored rule (200); other content under a name the project "
        "has taken is a 409. Names are the project's: a rule of the same name in another project is another rule, "
        "and a name is only ever looked up in the caller's project."
    ),
    responses={
        200: {"description": "The same rule was stored before: the stored one", "model": ReleaseRuleRead},
        409: openapi_error("The name is taken by another rule", {"detail": "release rule 'x' already exists"}),
    },
)
async def create_rule(
    body: ReleaseRuleCreate, session: SessionDep, response: Response, principal: CallerDep
) -> ReleaseRuleRead:
    created, rule = await release_service.create(session, principal, body)
    if not created:
        response.status_code = status.HTTP_200_OK
    return rule


@router.get("", response_model=ReleaseRuleList, summary="List the project's release rules, newest first")
async def list_rules(session: SessionDep, principal: CallerDep) -> ReleaseRuleList:
    return await release_service.list_rules(session, principal)


@router.get("/{rule}", response_model=ReleaseRuleRead, summary="One of the project's release rules, by name or id",
            responses=_NOT_FOUND)
async def get_rule(rule: RuleRef, session: SessionDep, principal: CallerDep) -> ReleaseRuleRead:
    return await release_service.get(session, principal, rule)


@router.get(
    "/{rule}/evaluate",
    response_model=ReleaseEvaluation,
    summary="Judge a comparison of two runs under the rule: pass, fail or not_enough_data",
    description=(
        "Compares the runs as `GET /v1/compare` does (paired, on the problems finished in both) at the rule's "
        "confidence, then judges each clause: it passes when the whole interval is on the allowed side of the "
        "threshold, fails when the whole interval is beyond it, and otherwise there is not enough data. The rule "
        "passes when every clause passes and fails when any clause fails. For CI: `passk gate`."
    ),
    responses=comparison_responses(
        "No shared problem has finished in both runs yet", not_found="No such rule or run", missing=_RULE_EXAMPLE
    ),
)
async def evaluate_rule(
    rule: RuleRef,
    session: SessionDep,
    principal: CallerDep,
    base: Annotated[uuid.UUID, Query(description="The reference run")],
    candidate: Annotated[uuid.UUID, Query(description="The run that would ship")],
    intersection: Annotated[bool, Query(description="Allow runs on different datasets")] = False,
    resamples: ResamplesQuery = 10_000,
    seed: SeedQuery = 0,
) -> ReleaseEvaluation:
    options = CompareOptions(ks=[], intersection=intersection, resamples=resamples, seed=seed, items_limit=0)
    comparison = await release_service.evaluate_runs(session, principal, rule, base, candidate, options)
    assert comparison.release is not None
    return comparison.release

