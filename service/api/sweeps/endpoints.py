"""HTTP route for temperature sweeps."""

from __future__ import annotations

from fastapi import APIRouter

from service.api.dependencies import SessionDep
from service.api.multirun import MultiRunDep, comparison_responses
from service.api.sweeps import service as sweep_service
from service.api.sweeps.schemas import Sweep
from service.api.auth.dependencies import CallerDep

router = APIRouter(prefix="/v1/sweeps", tags=["sweeps"])


@router.get(
    "",
    response_model=Sweep,
    summary="One model's runs at several temperatures: curves side by side, the best temperature per k, the envelope",
    description=(
        "Seed 001: pass@1 falls and pass@k rises with temperature, and temperature is part of the metric. Each run "
        "stays its own curve (never pooled); all runs and every k share one set of resampled problems, so per k "
        "the response gives the best temperature, the share of resamples in which each run is best, the paired "
        "margin to the runner-up with its interval, and the envelope (max over temperatures) with a simultaneous "
        "interval that covers the best temperature's pass@k whichever it is. Tied resamples count equally for "
        "the tied runs, so the order of the runs does not change the answer; `tie` says when the estimates tie."
    ),
    responses=comparison_responses("No problem has finished in every run yet"),
)
async def get_sweep(session: SessionDep, principal: CallerDep, query: MultiRunDep) -> Sweep:
    return await sweep_service.sweep(session, principal, query)
