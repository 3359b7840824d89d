"""Faults injected into real processes: Postgres, the Docker engine and the API restart; runs are cancelled.

Every test drives a LocalStack whose Postgres cluster and Docker engine belong to this module alone,
so restarting them disturbs nobody else on the machine: the engine is a second `dockerd` with its own
data root, socket and cgroup parent, loaded with the sandbox image (the SIGKILLed-worker case lives in
test_workers.py). After each fault the same questions are asked: did every sample end exactly once with
its true verdict, is the record consistent, and was anything (container, process, file) left behind?
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import docker
import httpx
import psycopg
import pytest
from sqlalchemy.engine import make_url

from sandbox.container import LABEL_ROLE, ROLE_SANDBOX
from passk_dev.localstack import LocalStack, end_process, wait_for_run
from tests.e2e.conftest import wait_until

pytestmark = pytest.mark.slow

PROMPT = "def square(x):\n"
TEST = "def check(candidate):\n    assert candidate(3) == 9\n"


# --------------------------------------------------------------------------- a Docker engine of our own


class PrivateEngine:
    """A second dockerd next to the machine's own, which this module may stop and start at will."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="passk-faults-docker-"))
        self.host = f"unix://{self.root}/docker.sock"
        self.cgroup_parent = f"passk-faults-{os.getpid()}"
        self.process: subprocess.Popen | None = None
        self.restarts = 0

    def client(self) -> docker.DockerClient:
        return docker.DockerClient(base_url=self.host, timeout=120)

    def start(self) -> None:
        if shutil.which("dockerd") is None or os.geteuid() != 0:
            raise RuntimeError("the Docker fault tests start their own dockerd: they need root and dockerd installed")
        with open(self.root / "dockerd.log", "ab") as log:
            self.process = subprocess.Popen(
                [
                    "dockerd", "--data-root", str(self.root / "data"), "--exec-root", str(self.root / "exec"),
                    "--host", self.host, "--pidfile", str(self.root / "dockerd.pid"),
                    # No networking of its own (sandboxes have none) so it cannot clash with the main engine.
                    "--bridge=none", "--iptables=false", "--ip-masq=false",
                    "--cgroup-parent", self.cgroup_parent, "--shutdown-timeout", "2",
                ],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            )
        process = self.process

        def answers() -> bool:
            try:
                return bool(self.client().ping())
            except Exception:
                tail = (self.root / "dockerd.log").read_text(errors="replace")[-2000:]
                assert process.poll() is None, f"the private dockerd exited:\n{tail}"
                return False

        wait_until(answers, 60, "the private dockerd to come up", poll_s=0.2)

    def stop(self, crash: bool = False) -> None:
        """A clean shutdown (SIGTERM, as `systemctl stop docker`), or with crash=True a SIGKILL."""
        if self.process is None:
            return
        end_process(self.process, 60, signal.SIGKILL if crash else signal.SIGTERM)
        self.process = None

    def restart(self, down_s: float = 1.0, crash: bool = False) -> None:
        self.stop(crash=crash)
        time.sleep(down_s)
        self.start()
        self.restarts += 1

    def load(self, image: str) -> None:
        """Copy the sandbox image from the machine's engine (same image id, so cache keys agree)."""
        if _has_image(self.client(), image):
            return
        main = docker.from_env(timeout=300)
        self.client().api.load_image(main.api.get_image(image))
        assert _has_image(self.client(), image), f"{image} did not load into the private engine"

    def close(self) -> None:
        try:
            if self.process is not None:
                client = self.client()
                for container in client.containers.list(all=True):
                    container.remove(force=True)
        finally:
            self.stop()
            # dockerd bind-mounts its data root onto itself, once more after each crash: undo them all.
            for _ in range(10):
                mounts = _mounts_under(self.root)
                if not mounts:
                    break
                for mount in sorted(mounts, reverse=True):
                    subprocess.run(["umount", mount], check=False, capture_output=True)
            shutil.rmtree(self.root, ignore_errors=True)
            # The cgroup parent dockerd made for its containers outlives it: remove it (empty by now).
            for cgroup in self.cgroups():
                for directory in sorted((d for d in cgroup.rglob("*") if d.is_dir()), reverse=True) + [cgroup]:
                    try:
                        directory.rmdir()
                    except OSError:
                        pass

    def cgroups(self) -> list[Path]:
        """The engine's cgroup parent under each controller (cgroup v1) or in the unified tree (v2)."""
        root = Path("/sys/fs/cgroup")
        return [path for path in (root / self.cgroup_parent, *root.glob(f"*/{self.cgroup_parent}")) if path.is_dir()]


def _mounts_under(root: Path) -> list[str]:
    points = (line.split()[1] for line in Path("/proc/mounts").read_text().splitlines())
    return [point for point in points if point.startswith(f"{root}/")]


def _has_image(client: docker.DockerClient, image: str) -> bool:
    try:
        client.images.get(image)
        return True
    except docker.errors.ImageNotFound:
        return False


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def engine() -> Iterator[PrivateEngine]:
    private = PrivateEngine()
    try:
        private.start()
        yield private
    finally:
        private.close()
    assert not private.root.exists(), "the private engine's directory was left behind"
    assert not private.cgroups(), f"the private engine's cgroups were left behind: {private.cgroups()}"


@pytest.fixture(scope="module")
def stack(engine: PrivateEngine) -> Iterator[LocalStack]:
    # Short leases so reclaiming after a lost worker takes seconds; workers talk to the private engine only.
    with LocalStack(
        prefix="passk_faults", private_postgres=True,
        extra_env={"PASSK_LEASE_SECONDS": "6", "DOCKER_HOST": engine.host},
    ) as running:
        engine.load(running.image)
        pg_root = running._cluster.root if running._cluster else None
        yield running
    assert pg_root is not None and not pg_root.exists(), "the stack's Postgres directory was left behind"


@pytest.fixture(scope="module")
def dataset_id(stack: LocalStack) -> str:
    body = {"name": "faults", "problems": [{"id": "p0", "prompt": PROMPT, "test": TEST, "entry_point": "square"}]}
    response = stack.client().post("/v1/datasets", json=body)
    assert response.status_code in (200, 201), response.text
    return response.json()["id"]


@pytest.fixture(autouse=True)
def nothing_left_behind(stack: LocalStack, engine: PrivateEngine) -> Iterator[None]:
    yield
    stack.stop_workers()
    _assert_nothing_left(stack, engine)


# --------------------------------------------------------------------------- helpers


def _completion(i: int, sleep_s: float) -> tuple[str, str]:
    """Sample i and its true verdict: every fourth is wrong, the rest pass; each takes sleep_s."""
    body = "x + 1" if i % 4 == 3 else "x * x"
    return f"    import time\n    time.sleep({sleep_s})\n    return {body}  # sample {i}\n", (
        "failed" if i % 4 == 3 else "passed"
    )


def _submit(client: httpx.Client, dataset_id: str, n: int, sleep_s: float) -> tuple[str, dict[int, str]]:
    samples, expected = [], {}
    for i in range(n):
        completion, verdict = _completion(i, sleep_s)
        samples.append({"problem_id": "p0", "completion": completion})
        expected[i] = verdict
    body = {"dataset_id": dataset_id, "model": "m", "sampling": {"temperature": 1.0}, "samples": samples, "cache": False}
    response = client.post("/v1/runs", json=body)
    assert response.status_code == 202, response.text
    return response.json()["id"], expected


def _samples(client: httpx.Client, run_id: str) -> list[dict]:
    return client.get(f"/v1/runs/{run_id}/samples", params={"limit": 1000}).raise_for_status().json()["items"]


def _db(stack: LocalStack) -> psycopg.Connection:
    url = make_url(stack.database_url).set(drivername="postgresql").render_as_string(hide_password=False)
    return psycopg.connect(url, autocommit=True)


def _states(stack: LocalStack, run_id: str) -> Counter[str]:
    with _db(stack) as conn:
        rows = conn.execute("SELECT state, count(*) FROM samples WHERE run_id = %s GROUP BY state", (run_id,)).fetchall()
    return Counter({state: count for state, count in rows})


def _assert_true_verdicts(client: httpx.Client, run_id: str, expected: dict[int, str]) -> list[dict]:
    """The run completed, every sample is done once with its true verdict, and the counts add up."""
    run = client.get(f"/v1/runs/{run_id}").raise_for_status().json()
    assert run["status"] == "completed", run
    rows = _samples(client, run_id)
    assert sorted(row["index"] for row in rows) == sorted(expected), "a sample is missing or duplicated"
    wrong = [(row["index"], row["verdict"], row["detail"]) for row in rows if row["verdict"] != expected[row["index"]]]
    assert not wrong, f"samples without their true verdict: {wrong[:10]}"
    assert all(row["state"] == "done" for row in rows)
    progress = run["progress"]
    want = Counter(expected.values())
    assert progress["total"] == progress["done"] == len(expected) == run["sample_count"]
    assert progress["by_state"] == {"queued": 0, "leased": 0, "done": len(expected), "cancelled": 0}
    assert sum(progress["by_verdict"].values()) == len(expected)
    assert progress["by_verdict"]["passed"] == want["passed"] and progress["by_verdict"]["failed"] == want["failed"]
    assert progress["by_verdict"]["sandbox_error"] == 0
    # pass@1 is exactly the pass rate: no infrastructure failure was counted against the model.
    metrics = client.get(f"/v1/runs/{run_id}/metrics", params={"k": "1", "resamples": 100}).raise_for_status().json()
    assert metrics["metrics"][0]["pass_at_k"]["estimate"] == pytest.approx(want["passed"] / len(expected))
    return rows


def _our_processes(stack: LocalStack, engine: PrivateEngine) -> list[str]:
    """Live host processes that belong to this stack (by its database URL) or run in the private engine's cgroups."""
    found = []
    marker = f"PASSK_DATABASE_URL={stack.database_url}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = Path(f"/proc/{entry}/stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] == "Z":
                continue  # a zombie is already dead
            cgroup = Path(f"/proc/{entry}/cgroup").read_text()
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        is_worker = "service.cli" in cmdline and "worker" in cmdline and marker in environ.split(b"\0")
        is_sandbox = f"/{engine.cgroup_parent}/" in cgroup
        if is_worker or is_sandbox:
            found.append(f"{entry}: {cmdline.strip()}")
    return found


def _assert_nothing_left(stack: LocalStack, engine: PrivateEngine) -> None:
    if engine.process is not None:
        leftovers = engine.client().containers.list(all=True, filters={"label": f"{LABEL_ROLE}={ROLE_SANDBOX}"})
        assert leftovers == [], f"sandbox containers left behind: {[(c.name, c.status) for c in leftovers]}"
    # Containers go asynchronously with their processes: give the kernel a moment to reap.
    try:
        wait_until(lambda: not _our_processes(stack, engine), 10, "our processes to be reaped", poll_s=0.2)
    except AssertionError:
        processes = _our_processes(stack, engine)
        assert processes == [], f"processes left behind: {processes}"


# --------------------------------------------------------------------------- the faults


@pytest.mark.parametrize("down_s", [2.0, 20.0], ids=["brief", "longer-than-a-batch"])
def test_postgres_restart_mid_run(stack: LocalStack, dataset_id: str, down_s: float) -> None:
    """Brief: claims and renewals fail and are retried. Long: batches end while the database is away,
    so their results wait in the worker (whose leases lapse meanwhile) until it can record them."""
    client = stack.client(timeout=30)
    worker = stack.start_worker(concurrency=2)
    run_id, expected = _submit(client, dataset_id, n=48, sleep_s=0.25)
    wait_until(lambda: _states(stack, run_id)["done"] >= 6, 60, "the first verdicts")

    stack.restart_postgres(down_s=down_s)

    # The API reconnects by itself (database.check_on_checkout): the same key, the same URL, no restart of the API.
    def api_answers() -> bool:
        try:
            return client.get(f"/v1/runs/{run_id}").status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(api_answers, 30, "the API to answer after the database came back", poll_s=0.3)
    run = wait_for_run(client, run_id, timeout_s=120)
    assert run["status"] == "completed", run
    assert worker.poll() is None, "the worker died with the database instead of reconnecting"
    rows = _assert_true_verdicts(client, run_id, expected)
    # A claim cut short by the restart rolled back; at most one claim per sample can have been lost.
    assert {row["attempts"] for row in rows} <= {1, 2}
    status = client.get("/v1/status").raise_for_status().json()
    assert status["queue"] == {"queued": 0, "leased": 0, "expired_leases": 0}, status


def test_docker_engine_restart_mid_run(stack: LocalStack, engine: PrivateEngine, dataset_id: str) -> None:
    client = stack.client(timeout=30)
    stack.start_worker(concurrency=2)
    run_id, expected = _submit(client, dataset_id, n=64, sleep_s=0.25)
    wait_until(lambda: _states(stack, run_id)["done"] >= 8, 60, "the first verdicts")

    # Watch the samples while the engine is away: the ones caught by it go back to the queue as sandbox errors.
    retried: dict[int, str] = {}
    watching = threading.Event()
    watching.set()

    def watch() -> None:
        with stack.client(timeout=30) as watcher:
            while watching.is_set():
                for row in _samples(watcher, run_id):
                    if row["state"] == "queued" and (row["detail"] or "").startswith("retrying after"):
                        retried[row["index"]] = row["detail"]
                time.sleep(0.1)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        engine.restart(down_s=3.0, crash=True)
        run = wait_for_run(client, run_id, timeout_s=150)
    finally:
        watching.clear()
        thread.join(timeout=30)
    assert run["status"] == "completed", run
    rows = _assert_true_verdicts(client, run_id, expected)
    attempts = {row["index"]: row["attempts"] for row in rows}
    assert retried, "no sample was seen going back to the queue after a sandbox error"
    # Each affected sample lost one attempt to the engine and got its verdict on the next one.
    wrong = {index: (attempts[index], detail) for index, detail in retried.items() if attempts[index] != 2}
    assert not wrong, wrong
    assert set(attempts.values()) <= {1, 2}, attempts
    assert max(attempts.values()) < int(stack.env.get("PASSK_MAX_ATTEMPTS", "3"))


def test_api_restart_mid_run(stack: LocalStack, dataset_id: str) -> None:
    client = stack.client(timeout=30)
    stack.start_worker(concurrency=2)
    run_id, expected = _submit(client, dataset_id, n=48, sleep_s=0.25)
    wait_until(lambda: _states(stack, run_id)["done"] >= 6, 60, "the first verdicts")

    stack.stop_api()
    before = _states(stack, run_id)["done"]
    with pytest.raises(httpx.TransportError):
        client.get(f"/v1/runs/{run_id}")
    # Workers never talk to the API: the run goes on while it is down.
    wait_until(lambda: _states(stack, run_id)["done"] >= before + 4, 30, "progress while the API was down")
    stack.restart_api()

    run = wait_for_run(client, run_id, timeout_s=120)
    assert run["status"] == "completed", run
    rows = _assert_true_verdicts(client, run_id, expected)
    assert {row["attempts"] for row in rows} == {1}


def _assert_cancelled_record(stack: LocalStack, client: httpx.Client, run_id: str, expected: dict[int, str]) -> Counter:
    run = client.get(f"/v1/runs/{run_id}").raise_for_status().json()
    assert run["status"] == "cancelled" and run["finished_at"] is not None, run
    rows = _samples(client, run_id)
    states = Counter(row["state"] for row in rows)
    assert set(states) <= {"done", "cancelled"}, states
    for row in rows:
        if row["state"] == "done":  # finished before the cancel: a real verdict, never a made-up one
            assert row["verdict"] == expected[row["index"]], row
        else:
            assert row["verdict"] is None, row
    progress = run["progress"]
    assert progress["total"] == len(rows) == len(expected)
    assert progress["by_state"]["done"] + progress["by_state"]["cancelled"] == len(expected)
    assert progress["done"] == states["done"] == sum(progress["by_verdict"].values())
    return states


def test_cancel_stops_leased_samples_within_seconds(stack: LocalStack, dataset_id: str) -> None:
    client = stack.client(timeout=30)
    stack.start_worker(concurrency=2)
    # 16-sample batches of 0.5 s programs: finishing a claimed batch would take 8 s.
    run_id, expected = _submit(client, dataset_id, n=100, sleep_s=0.5)
    wait_until(lambda: (s := _states(stack, run_id))["done"] >= 2 and s["leased"] >= 8, 60, "leased samples")

    cancelled_at = time.monotonic()
    response = client.post(f"/v1/runs/{run_id}/cancel")
    assert response.status_code == 200 and response.json()["status"] == "cancelled", response.text
    wait_until(lambda: _states(stack, run_id)["leased"] == 0, 5, "the worker to let go of the cancelled run's samples")
    stopped_after = time.monotonic() - cancelled_at
    done = _states(stack, run_id)["done"]
    time.sleep(2.0)
    assert _states(stack, run_id)["done"] == done, "samples of the cancelled run kept finishing"
    states = _assert_cancelled_record(stack, client, run_id, expected)
    assert states["cancelled"] >= 60, states
    with _db(stack) as conn:
        late = conn.execute(
            "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id "
            "WHERE s.run_id = %s AND s.finished_at > r.finished_at + interval '4 seconds'", (run_id,)
        ).fetchone()[0]
    assert late == 0, f"{late} samples finished more than 4 s after the cancel"

    # The worker is free for other work at once; and DELETE cancels just the same.
    other_id, other_expected = _submit(client, dataset_id, n=4, sleep_s=0.0)
    wait_for_run(client, other_id, timeout_s=30)
    _assert_true_verdicts(client, other_id, other_expected)
    third_id, third_expected = _submit(client, dataset_id, n=40, sleep_s=0.5)
    wait_until(lambda: _states(stack, third_id)["leased"] >= 8, 60, "leased samples")
    assert client.delete(f"/v1/runs/{third_id}").json()["status"] == "cancelled"
    wait_until(lambda: _states(stack, third_id)["leased"] == 0, 5, "the worker to stop the deleted run")
    _assert_cancelled_record(stack, client, third_id, third_expected)
    assert client.get(f"/v1/runs/{run_id}").json()["status"] == "cancelled"  # never flipped back
    print(f"cancel: leased samples released {stopped_after:.2f} s after POST /cancel")


def test_cancel_with_a_dead_workers_leases(stack: LocalStack, engine: PrivateEngine, dataset_id: str) -> None:
    """Leases of a SIGKILLed worker expire after the run was cancelled: they end cancelled, not requeued."""
    client = stack.client(timeout=30)
    doomed = stack.start_worker(concurrency=1)
    run_id, expected = _submit(client, dataset_id, n=12, sleep_s=0.5)
    wait_until(lambda: _states(stack, run_id)["leased"] >= 1, 60, "a claim")
    doomed.send_signal(signal.SIGKILL)
    doomed.wait()
    assert client.delete(f"/v1/runs/{run_id}").json()["status"] == "cancelled"
    # Its supervisor notices the hang-up and exits; the next worker sweeps the container on start.
    sandboxes = {"label": f"{LABEL_ROLE}={ROLE_SANDBOX}", "status": "running"}
    wait_until(lambda: not engine.client().containers.list(filters=sandboxes), 30, "the orphaned sandbox to exit")
    stack.start_worker(concurrency=1)
    # Its maintenance loop reclaims the expired leases (6 s) of the cancelled run.
    wait_until(lambda: _states(stack, run_id)["leased"] == 0, 30, "the expired leases to be reclaimed")
    wait_until(lambda: client.get(f"/v1/runs/{run_id}").json()["progress"]["by_state"]["cancelled"] == 12, 10,
               "every sample of the cancelled run to end cancelled")
    states = _assert_cancelled_record(stack, client, run_id, expected)
    assert states == {"cancelled": 12}, states
    with _db(stack) as conn:
        attempts = {row[0] for row in conn.execute("SELECT attempts FROM samples WHERE run_id = %s", (run_id,))}
    assert attempts <= {0, 1}, "a sample of the cancelled run was claimed again"


def test_status_and_metrics_after_the_faults(stack: LocalStack) -> None:
    client = stack.client(timeout=30)
    stack.start_worker(concurrency=1)
    status = wait_until(
        lambda: (s := client.get("/v1/status").raise_for_status().json())["workers"]["live"] == 1 and s, 30,
        "the worker's heartbeat",
    )
    assert status["queue"] == {"queued": 0, "leased": 0, "expired_leases": 0}, status
    with _db(stack) as conn:
        runs = dict(conn.execute("SELECT status, count(*) FROM runs GROUP BY status").fetchall())
        finals = conn.execute("SELECT count(*) FROM samples WHERE verdict = 'sandbox_error'").fetchone()[0]
    assert {k: v for k, v in status["runs"].items() if v} == runs, status
    # The engine restart's sandbox errors were all retried: none is a final verdict.
    assert status["sandbox_errors"]["total"] == finals == 0, status
    metrics = client.get("/metrics")
    assert metrics.status_code == 200 and metrics.headers["content-type"].startswith("text/plain")
    assert "passk_workers_live 1" in metrics.text
    for run_status, count in runs.items():
        assert f'passk_runs{{status="{run_status}"}} {count}' in metrics.text
    # The ops endpoints need a key with the read scope like every /v1 route.
    assert httpx.get(f"{stack.api_url}/metrics").status_code == 401
    assert httpx.get(f"{stack.api_url}/v1/status").status_code == 401
