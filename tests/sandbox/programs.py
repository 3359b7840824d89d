"""Helpers for running programs in the real sandbox (the fixtures are in tests/conftest.py)."""

from __future__ import annotations

from sandbox.executor import Job, Outcome, Sandbox, SandboxSettings
from service.formats.program import Program

MIB = 1024 * 1024


def run_one(box: Sandbox, program: str, time_limit_s: float = 3.0, memory_mb: int = 256) -> Outcome:
    return box.run([Job("job", program, time_limit_s, memory_mb * MIB)])[0]


def run_many(box: Sandbox, programs: list[str], time_limit_s: float = 3.0, memory_mb: int = 256) -> list[Outcome]:
    return box.run([Job(str(i), p, time_limit_s, memory_mb * MIB) for i, p in enumerate(programs)])


def run_programs(box: Sandbox, programs: list[Program], time_limit_s: float = 3.0, memory_mb: int = 256) -> list[Outcome]:
    """Programs as the worker builds them: their own time limit if they carry one, under their judge."""
    jobs = [Job(str(i), p.text, p.time_limit_s or time_limit_s, memory_mb * MIB, p.judged, language=p.language,
                native=p.native) for i, p in enumerate(programs)]
    return box.run(jobs)


def image_sandbox(docker_client, image: str) -> Sandbox:  # noqa: ANN001
    """A sandbox that runs every job in `image` (a language's image built by the test), whatever its language."""
    return Sandbox(docker_client, SandboxSettings(image="unused", images=lambda _: image, owner="passk-tests"))


def run_sharded(docker_client, image: str, jobs: list[Job], shard_of=None, sandboxes: int = 2) -> dict[str, Outcome]:  # noqa: ANN001
    """id -> outcome of each job, through `sandboxes` containers of `image` side by side (the machine's cores).
    Jobs whose `shard_of(job)` is the same (a problem) run in the same container, in their order, so that its
    judge is compiled once; an exception in any container is raised here."""
    from concurrent.futures import ThreadPoolExecutor

    keys = sorted({shard_of(job) for job in jobs}) if shard_of else []
    shares: list[list[Job]] = [[] for _ in range(sandboxes)]
    for index, job in enumerate(jobs):
        shares[(keys.index(shard_of(job)) if shard_of else index) % sandboxes].append(job)

    def run(share: list[Job]) -> list[Outcome]:
        box = image_sandbox(docker_client, image)
        try:
            return box.run(share)
        finally:
            box.close()

    with ThreadPoolExecutor(sandboxes) as pool:
        finished = list(pool.map(run, [share for share in shares if share]))
    return wall_timeouts_again_alone(docker_client, image, jobs,
                                     {outcome.id: outcome for outcomes in finished for outcome in outcomes})


def wall_timeouts_again_alone(docker_client, image: str, jobs: list[Job], outcomes: dict[str, Outcome]) -> dict[str, Outcome]:  # noqa: ANN001
    """The worker's rule for a wall-clock timeout (service/worker/cache.py): on a loaded machine it may be the
    machine's (a compile that got no CPU, a start-up that waited for the disk), so it runs again, alone, in a
    fresh sandbox before it counts. Returns `outcomes` with those jobs' second outcomes."""
    from service.worker.cache import wall_timeout

    again = [job for job in jobs if wall_timeout(outcomes[job.id])]
    if not again:
        return outcomes
    box = image_sandbox(docker_client, image)
    try:
        return {**outcomes, **{job.id: box.run([job])[0] for job in again}}
    finally:
        box.close()
