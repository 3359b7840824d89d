"""Release rule use cases: store (immutable), read, and judge a comparison. Never commits."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from service.api.auth.principal import Principal
from service.api.compare.schemas import Comparison
from service.api.compare.service import CompareOptions, compare_runs
from service.core.exceptions import Conflict, NotFound
from service.core.models import ReleaseRule, Run
from service.api.release.repository import ReleaseRuleRepository
from service.api.runs.repository import RunRepository
from service.api.release.schemas import (
    Clause,
    ClauseResult,
    Limit,
    ReleaseEvaluation,
    ReleaseMetric,
    ReleaseRuleCreate,
    ReleaseRuleList,
    ReleaseRuleRead,
)
from service.statistics.release import Bound, ReleaseVerdict, combine, judge

_NAMES = {
    ReleaseMetric.COST_PER_SUCCESS: "cost per success",
    ReleaseMetric.MEAN_COST_PER_SAMPLE: "mean cost per sample",
    ReleaseMetric.LATENCY_P95_MS: "p95 latency (ms)",
    ReleaseMetric.BRIER: "Brier score",
}
# limit -> (which figure, which side is bounded, sign of the threshold)
_LIMITS: dict[Limit, tuple[str, Bound, float]] = {
    Limit.MAX_DROP: ("difference", Bound.LOWER, -1.0),
    Limit.MAX_INCREASE: ("difference", Bound.UPPER, 1.0),
    Limit.MAX_RELATIVE_INCREASE: ("relative_difference", Bound.UPPER, 1.0),
    Limit.MAX: ("candidate", Bound.UPPER, 1.0),
    Limit.MIN: ("candidate", Bound.LOWER, 1.0),
}
_WORDS = {
    Limit.MAX_DROP: "must not drop by more than {t} (lower bound of the paired interval of candidate - base >= {nt})",
    Limit.MAX_INCREASE: "must not rise by more than {t} (upper bound of the paired interval of candidate - base <= {t})",
    Limit.MAX_RELATIVE_INCREASE: "must not rise by more than {pct} (upper bound of candidate / base - 1 <= {t})",
    Limit.MAX: "must stay at or below {t} (upper bound of the candidate's interval)",
    Limit.MIN: "must stay at or above {t} (lower bound of the candidate's interval)",
}


def _read(rule: ReleaseRule) -> ReleaseRuleRead:
    return ReleaseRuleRead(
        id=rule.id, name=rule.name, description=rule.description, confidence=rule.confidence,
        clauses=[Clause.model_validate(c) for c in rule.clauses], created_at=rule.created_at,
    )


def _stored(body: ReleaseRuleCreate) -> dict[str, Any]:
    return {
        "description": body.description,
        "confidence": body.confidence,
        "clauses": [c.model_dump(mode="json") for c in body.clauses],
    }


async def create(session: AsyncSession, principal: Principal, body: ReleaseRuleCreate) -> tuple[bool, ReleaseRuleRead]:
    """(created, rule) in the caller's project. The same name with the same content again is the same rule;
    different content is a 409. Another project's rule of the same name is another rule."""
    repository = ReleaseRuleRepository(session)
    values = _stored(body)
    rule = await repository.insert({"id": uuid.uuid4(), "project_id": principal.project_id, "name": body.name, **values})
    if rule is not None:
        return True, _read(rule)
    existing = await repository.by_name(principal, body.name)
    assert existing is not None
    same = {"description": existing.description, "confidence": existing.confidence, "clauses": existing.clauses}
    if same != values:
        raise Conflict(
            f"release rule {body.name!r} already exists (stored {existing.created_at.isoformat()}) with other "
            "content; rules are immutable so that they can be written before a run: store it under a new name"
        )
    return False, _read(existing)


async def get(session: AsyncSession, principal: Principal, rule: str) -> ReleaseRuleRead:
    return _read(await _find(session, principal, rule))


async def _find(session: AsyncSession, principal: Principal, rule: str) -> ReleaseRule:
    """A rule by id, or by name in the caller's project."""
    repository = ReleaseRuleRepository(session)
    found = None
    try:
        found = await repository.by_id(principal, uuid.UUID(rule))
    except ValueError:
        pass
    found = found or await repository.by_name(principal, rule)
    if found is None:
        raise NotFound("release rule", repr(rule))
    return found


async def list_rules(session: AsyncSession, principal: Principal) -> ReleaseRuleList:
    return ReleaseRuleList(items=[_read(r) for r in await ReleaseRuleRepository(session).list_all(principal)])


def _judge_clause(clause: Clause, comparison: Comparison) -> ClauseResult:
    which, bound, sign = _LIMITS[clause.limit]
    threshold = sign * float(clause.threshold)
    checked = "ci_low" if bound is Bound.LOWER else "ci_high"
    t = f"{clause.threshold:g}"
    words = _WORDS[clause.limit].format(t=t, nt=f"{-float(clause.threshold):g}", pct=f"{100 * clause.threshold:g} %")
    estimate = low = high = None
    reason = None
    if clause.metric is ReleaseMetric.PASS_AT_K:
        name = f"pass@{clause.k}"
        metric = next((m for m in comparison.metrics if m.k == clause.k), None)
        if metric is None:  # evaluate() always asks for the rule's ks; kept for safety
            reason = f"pass@{clause.k} was not computed"
        else:
            interval = getattr(metric, which)
            estimate, low, high = interval.estimate, interval.ci_low, interval.ci_high
            if interval.method_used == "none":
                low = high = None
                reason = interval.fallback_reason
    else:
        name = _NAMES[clause.metric]
        paired = comparison.figures.get(clause.metric.value)
        if paired is None:
            reason = f"the runs' samples do not both carry what {name} needs (cost, latency_ms or confidence)"
        else:
            figure = getattr(paired, which)
            estimate, low, high, reason = figure.estimate, figure.ci_low, figure.ci_high, figure.note
    labels = {
        "difference": "difference (candidate - base)",
        "relative_difference": "relative change (candidate / base - 1)",
        "candidate": "of the candidate",
    }
    verdict = judge(bound, threshold, low, high)
    if verdict is not ReleaseVerdict.NOT_ENOUGH_DATA:
        reason = None
    elif reason is None:
        reason = f"the interval [{low:g}, {high:g}] contains the threshold {threshold:g}"
    return ClauseResult(
        clause=clause, text=f"{name} {words}", figure=f"{name} {labels[which]}", estimate=estimate, ci_low=low,
        ci_high=high, checked=checked, verdict=verdict, reason=reason,
    )


def rule_ks(rule: ReleaseRuleRead) -> list[int]:
    return sorted({c.k for c in rule.clauses if c.metric is ReleaseMetric.PASS_AT_K and c.k is not None})


def evaluate(rule: ReleaseRuleRead, comparison: Comparison, candidate: Run) -> ReleaseEvaluation:
    results = [_judge_clause(clause, comparison) for clause in rule.clauses]
    before = rule.created_at < candidate.created_at
    warnings = list(comparison.warnings)
    if not before:
        warnings.insert(
            0,
            f"the rule was stored at {rule.created_at.isoformat()}, after the candidate run was submitted "
            f"({candidate.created_at.isoformat()}): it was not written before the run",
        )
    return ReleaseEvaluation(
        rule=rule, base=comparison.base.run_id, candidate=comparison.candidate.run_id,
        candidate_created_at=candidate.created_at, rule_written_before_candidate=before,
        verdict=combine(r.verdict for r in results), clauses=results, problems=comparison.problems,
        confidence=comparison.confidence, warnings=warnings,
    )


async def evaluate_runs(
    session: AsyncSession, principal: Principal, rule_ref: str, base_id: uuid.UUID, candidate_id: uuid.UUID,
    options: CompareOptions,
) -> Comparison:
    """The comparison under the rule's confidence, with the pass@k it needs, and the rule's verdict in `release`."""
    rule = await get(session, principal, rule_ref)
    ks = list(options.ks) + [k for k in rule_ks(rule) if k not in options.ks]
    ks = ks or [1]
    comparison = await compare_runs(
        session, principal, base_id, candidate_id, replace(options, ks=ks, confidence=rule.confidence)
    )
    candidate = await RunRepository(session).get(principal, candidate_id)
    assert candidate is not None  # compare_runs found it
    comparison.release = evaluate(rule, comparison, candidate)
    return comparison
