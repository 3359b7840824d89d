"""Delivery against the real stack (Postgres, the API over HTTP, workers with Docker sandboxes):
live events that resume across reconnects and API restarts, webhooks, priorities, backpressure and the
SandboxFusion-compatible /run_code."""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

import service.client as passk_client_module
from passk_dev.localstack import LocalStack, wait_for_run
from service.api.delivery.admission import PRECHECK_ABOVE
from service.api.delivery.webhooks import verify
from tests.e2e.conftest import wait_until

SECRET = "webhook-secret-for-tests-0123456789abcdef"
CEILING = 400
PROMPT = "def f(x):\n"
TEST = "def check(candidate):\n    assert candidate(2) == 4\n"
RIGHT = "    return x * 2\n"
WRONG = "    return x + 3\n"


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    env = {
        "PASSK_WEBHOOK_ALLOW_NETWORKS": '["127.0.0.1/32"]',
        "PASSK_WEBHOOK_SECRET": SECRET,
        "PASSK_WEBHOOK_BACKOFF_S": "0.2",
        "PASSK_WEBHOOK_ATTEMPTS": "4",
        "PASSK_MAX_QUEUED_PER_KEY": str(CEILING),
        # Long enough for a worker to start while a stopping API still answers a waiting request.
        "PASSK_API_SHUTDOWN_GRACE_S": "60",
    }
    with LocalStack(prefix="passk_delivery", extra_env=env) as running:
        yield running


@pytest.fixture
def client(stack: LocalStack) -> Iterator[httpx.Client]:
    with stack.client() as c:
        yield c


def _dataset(client: httpx.Client, name: str, problems: int = 4) -> str:
    body = {"name": name, "problems": [
        {"id": f"p{i}", "prompt": PROMPT, "test": TEST + f"# {i}\n", "entry_point": "f"} for i in range(problems)
    ]}
    response = client.post("/v1/datasets", json=body)
    assert response.status_code in (200, 201), response.text
    return response.json()["id"]


def _run(client: httpx.Client, dataset: str, samples: list[dict], **extra: Any) -> httpx.Response:
    params = extra.pop("params", None)
    return client.post("/v1/runs", json={"dataset_id": dataset, "model": "m", "sampling": {"temperature": 0.2},
                                         "samples": samples, "cache": False, **extra}, params=params)


def _samples(count: int, problems: int = 4, completion: str = RIGHT) -> list[dict]:
    # `# n` makes every program distinct, so nothing is answered from the cache.
    return [{"problem_id": f"p{i % problems}", "completion": completion + f"    # {i}\n"} for i in range(count)]


def _events(response: httpx.Response, stop_after: int | None = None) -> list[dict]:
    """Parse an SSE stream into {"id", "event", "data"} dicts; stop after `stop_after` sample events."""
    events, current, samples = [], {}, 0
    for line in response.iter_lines():
        if line == "":
            if "data" in current:
                events.append({**current, "data": json.loads(current["data"])})
                if current.get("event") == "sample":
                    samples += 1
                if current.get("event") == "end" or (stop_after is not None and samples >= stop_after):
                    return events
            current = {}
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(": ")
        current[field] = value
    return events


@pytest.mark.slow
def test_run_code_answers_a_documented_sandboxfusion_request(stack: LocalStack, client: httpx.Client) -> None:
    stack.start_worker(concurrency=2)
    # SandboxFusion's get-started example, and its documented answer (execution_time aside).
    response = client.post("/run_code", json={"code": 'print("Hello, world!")', "language": "python"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert isinstance(body["run_result"].pop("execution_time"), float)
    assert body == {
        "status": "Success", "message": "", "compile_result": None,
        "run_result": {"status": "Finished", "return_code": 0, "stdout": "Hello, world!\n", "stderr": ""},
        "executor_pod_name": None, "files": {},
    }
    # Stored as an ordinary sample of an interactive run.
    run = client.get(f"/v1/runs/{response.headers['X-Passk-Run']}").json()
    assert run["status"] == "completed" and run["priority"] == "interactive" and run["progress"]["passed"] == 1

    echo = client.post("/run_code", json={"code": "import sys\nprint(sys.stdin.read()[::-1])", "language": "python",
                                          "stdin": "abc", "run_timeout": 5}).json()
    assert echo["status"] == "Success" and echo["run_result"]["stdout"] == "cba\n"
    exited = client.post("/run_code", json={"code": "import sys\nprint('x')\nsys.exit(3)", "language": "python"}).json()
    assert exited["status"] == "Failed"
    assert exited["run_result"]["status"] == "Finished" and exited["run_result"]["return_code"] == 3
    assert exited["run_result"]["stdout"] == "x\n"
    raised = client.post("/run_code", json={"code": "1/0", "language": "python"}).json()
    assert raised["status"] == "Failed" and raised["run_result"]["return_code"] == 1
    assert "ZeroDivisionError" in raised["run_result"]["stderr"]
    looped = client.post("/run_code", json={"code": "while True: pass", "language": "python", "run_timeout": 1}).json()
    assert looped["status"] == "Failed" and looped["run_result"]["status"] == "TimeLimitExceeded"
    files = client.post("/run_code", json={"code": "print(open('data/in.txt').read())", "language": "python",
                                           "files": {"data/in.txt": "aGVsbG8="}}).json()
    assert files["run_result"]["stdout"] == "hello\n", files

    refused = client.post("/run_code", json={"code": "IDENTIFICATION DIVISION.", "language": "cobol"})
    assert refused.status_code == 422 and "supported: " in refused.text and "python" in refused.text
    anonymous = httpx.post(f"{stack.api_url}/run_code", json={"code": "print(1)", "language": "python"})
    assert anonymous.status_code == 401


@pytest.mark.slow
def test_events_resume_across_a_disconnect_and_an_api_restart(stack: LocalStack, client: httpx.Client) -> None:
    stack.stop_workers()
    dataset = _dataset(client, "events")
    run = _run(client, dataset, _samples(40)).json()
    url = f"/v1/runs/{run['id']}/events"
    stack.start_worker(concurrency=1)
    with client.stream("GET", url) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        first = _events(response, stop_after=7)  # then the client goes away mid-stream
    stack.restart_api()
    seen = list(first)
    while not seen or seen[-1]["event"] != "end":
        last = seen[-1]["id"]
        with stack.client() as again, again.stream("GET", url, headers={"Last-Event-ID": last}) as response:
            assert response.status_code == 200
            seen += _events(response, stop_after=11)
    samples = [event for event in seen if event["event"] == "sample"]
    ids = [int(event["id"]) for event in seen]
    assert ids == sorted(ids) and len(set(ids)) == len(ids), "an event was repeated or out of order"
    assert sorted(event["data"]["id"] for event in samples) == sorted(
        row["id"] for row in client.get(f"/v1/runs/{run['id']}/samples", params={"limit": 1000}).json()["items"]
    ), "an event was lost"
    assert {event["data"]["verdict"] for event in samples} == {"passed"}
    end = seen[-1]["data"]
    assert end["status"] == "completed" and end["progress"]["done"] == 40 and end["metrics"].endswith("/metrics")
    # After the end event, nothing more will come: 204 tells EventSource to stop reconnecting.
    assert client.get(url, headers={"Last-Event-ID": seen[-1]["id"]}).status_code == 204


@pytest.mark.slow
def test_a_stopping_api_ends_its_streams_answers_its_waits_and_exits(
    stack: LocalStack, client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM with a live-event stream open and a request waiting for its run: the stream ends at once (a
    clean end, not a cut connection), the waiting request is answered once a worker has run its programs, and
    the API exits by itself rather than when killed. passk's client, following the run meanwhile, resumes on
    the API started after it and gets every event once."""
    # The API is down from its stop until the restart below, after a worker has started and run both runs.
    monkeypatch.setattr(passk_client_module, "RECONNECT_FOR_S", 300.0)
    stack.stop_workers()
    dataset = _dataset(client, "stopping")
    followed = _run(client, dataset, _samples(6)).json()
    streamed: list[str] = []

    def follow() -> None:
        try:
            with stack.client() as c, c.stream("GET", f"/v1/runs/{followed['id']}/events") as response:
                streamed.extend(response.iter_lines())
            streamed.append("<end of stream>")
        except httpx.HTTPError as exc:
            streamed.append(f"<cut: {exc!r}>")

    def wait_for_a_run() -> httpx.Response:
        with stack.client() as c:
            return _run(c, dataset, _samples(3), model="waited", params={"wait": 120})

    with ThreadPoolExecutor(4) as pool:
        stream = pool.submit(follow)
        waiting = pool.submit(wait_for_a_run)
        keepalives: list[dict] = []

        def follow_with_the_client() -> list[dict]:
            got = []
            for event in stack.passk_client().events(followed["id"], keepalives=True):
                (keepalives if event["event"] == "keepalive" else got).append(event)
            return got

        client_events = pool.submit(follow_with_the_client)
        wait_until(lambda: streamed and keepalives and client.get("/v1/runs", params={"model": "waited"}).json()["items"],
                   60, "the streams and the waiting request under way")
        stopped = pool.submit(stack.stop_api, 120)
        stream.result(timeout=60)
        assert streamed[-1] == "<end of stream>", streamed
        stack.start_worker(concurrency=1)
        answered = waiting.result(timeout=120)
        assert answered.status_code == 200 and answered.json()["status"] == "completed", answered.text
        assert stopped.result(timeout=120) == -signal.SIGTERM, "the API did not exit by itself"
        stack.restart_api()
        events = client_events.result(timeout=120)
    assert [e["event"] for e in events] == ["sample"] * 6 + ["end"]
    assert len({e["id"] for e in events}) == 7


class _Receiver(BaseHTTPRequestHandler):
    """A webhook receiver: answers `answers` in turn (then 200s); with `hold`, its first call waits for it."""

    answers: list[int] = []
    calls: list[tuple[dict[str, str], bytes]] = []
    hold: threading.Event | None = None

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        first = not type(self).calls
        type(self).calls.append((dict(self.headers), body))
        if first and type(self).hold is not None:
            type(self).hold.wait(120)
        code = type(self).answers.pop(0) if type(self).answers else 200
        try:
            self.send_response(code)
            self.end_headers()
        except OSError:
            pass  # the caller went away

    def log_message(self, *_args: object) -> None:
        pass


@pytest.mark.slow
def test_webhook_is_signed_retried_and_refused_for_private_addresses(stack: LocalStack, client: httpx.Client) -> None:
    stack.start_worker(concurrency=2)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    _Receiver.answers, _Receiver.calls, _Receiver.hold = [500, 503], [], None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        dataset = _dataset(client, "hooks")
        callback = f"http://127.0.0.1:{server.server_port}/hook"
        run = _run(client, dataset, _samples(4), callback_url=callback).json()
        wait_for_run(client, run["id"])
        webhook = wait_until(
            lambda: (w := client.get(f"/v1/runs/{run['id']}").json()["webhook"])["state"] == "delivered" and w,
            timeout_s=120, what="the webhook to be delivered",
        )
        assert [(a["attempt"], a["status_code"], a["delivered"]) for a in webhook["attempts"]] == [
            (1, 500, False), (2, 503, False), (3, 200, True)
        ]
        assert len(_Receiver.calls) == 3
        headers, body = _Receiver.calls[-1]
        assert verify(SECRET.encode(), headers["X-Passk-Timestamp"], body, headers["X-Passk-Signature"])
        assert not verify(b"another key", headers["X-Passk-Timestamp"], body, headers["X-Passk-Signature"])
        assert abs(int(headers["X-Passk-Timestamp"]) - time.time()) < 120
        payload = json.loads(body)
        assert payload["run_id"] == run["id"] and payload["status"] == "completed" and headers["X-Passk-Event"] == "completed"
    finally:
        server.shutdown()
    # SSRF: private, link-local and loopback targets outside the allowlist are refused, and nothing is sent.
    for target, kind in (("http://10.0.0.1/hook", "private"), ("http://169.254.169.254/latest", "link-local"),
                         ("http://[::1]:9/hook", "loopback"), ("http://192.168.1.1/", "private"),
                         ("file:///etc/passwd", "http or https")):
        response = _run(client, dataset, _samples(1), callback_url=target)
        assert response.status_code == 422 and kind in response.text, (target, response.text)


@pytest.mark.slow
def test_a_stopping_api_gives_back_the_webhook_it_was_delivering(stack: LocalStack, client: httpx.Client) -> None:
    """An API stopped while a webhook's call is under way gives its claim back: the next API delivers it at
    once, not after the claim's 15-minute timeout."""
    stack.start_worker(concurrency=1)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    _Receiver.answers, _Receiver.calls, _Receiver.hold = [], [], threading.Event()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        dataset = _dataset(client, "cut hooks")
        run = _run(client, dataset, _samples(2), callback_url=f"http://127.0.0.1:{server.server_port}/hook").json()
        wait_until(lambda: _Receiver.calls, 120, "the webhook's first call")
        assert stack.stop_api(timeout_s=60) == -signal.SIGTERM, "the API did not exit by itself"
        stack.restart_api()
        webhook = wait_until(
            lambda: (w := client.get(f"/v1/runs/{run['id']}").json()["webhook"])["state"] == "delivered" and w,
            timeout_s=120, what="the webhook delivered by the next API",
        )
        assert len(_Receiver.calls) == 2 and _Receiver.calls[0][1] == _Receiver.calls[1][1]
        assert [(a["attempt"], a["delivered"]) for a in webhook["attempts"]] == [(1, True)]
    finally:
        _Receiver.hold.set()
        server.shutdown()


@pytest.mark.slow
def test_interactive_runs_go_first_and_the_batch_run_still_progresses(stack: LocalStack, client: httpx.Client) -> None:
    stack.stop_workers()
    dataset = _dataset(client, "priorities", problems=16)
    batch = _run(client, dataset, _samples(320, problems=16)).json()
    first = _run(client, dataset, _samples(8, problems=1), priority="interactive").json()
    stack.start_worker(concurrency=1)
    done_first = wait_for_run(client, first["id"], poll_s=0.1)
    assert done_first["status"] == "completed"
    assert client.get(f"/v1/runs/{batch['id']}").json()["status"] != "completed", "the batch run went first"
    # A stream of interactive runs, each submitted as the previous one ends: the batch run keeps moving.
    before = client.get(f"/v1/runs/{batch['id']}").json()["progress"]["done"]
    for i in range(8):
        run = _run(client, dataset, _samples(8, problems=1, completion=RIGHT + f"    # stream {i}\n"),
                   priority="interactive").json()
        assert wait_for_run(client, run["id"], poll_s=0.1)["status"] == "completed"
    during = client.get(f"/v1/runs/{batch['id']}").json()["progress"]["done"]
    assert during > before, "interactive runs starved the batch run"
    assert wait_for_run(client, batch["id"])["status"] == "completed"


@pytest.mark.slow
def test_backpressure_429_and_no_over_admission_under_concurrent_posts(stack: LocalStack, client: httpx.Client) -> None:
    stack.stop_workers()
    dataset = _dataset(client, "ceiling")

    def post(i: int) -> httpx.Response:
        with stack.client() as own:
            return _run(own, dataset, _samples(50, completion=RIGHT + f"    # post {i}\n"))

    with ThreadPoolExecutor(max_workers=20) as pool:
        responses = list(pool.map(post, range(20)))
    accepted = [r for r in responses if r.status_code == 202]
    refused = [r for r in responses if r.status_code == 429]
    assert len(accepted) == CEILING // 50 and len(refused) == 20 - CEILING // 50, [r.status_code for r in responses]
    assert all(int(r.headers["Retry-After"]) >= 1 and "queue full" in r.text for r in refused)
    queued = client.get("/v1/status").json()["queue"]["queued"]
    assert queued == CEILING
    # A large run is refused by the count made before its rows are written (admission.precheck), the same way.
    large = _run(client, dataset, _samples(PRECHECK_ABOVE + 1))
    assert large.status_code == 429 and "queue full" in large.text, large.text
    assert client.get("/v1/status").json()["queue"]["queued"] == CEILING
    for response in accepted:
        client.post(f"/v1/runs/{response.json()['id']}/cancel").raise_for_status()
    # With room again, ?wait= answers with the ended run.
    stack.start_worker(concurrency=2)
    waited = _run(client, dataset, _samples(4), params={"wait": 60})
    assert waited.status_code == 200 and waited.json()["status"] == "completed", waited.text


def _follow(url: str, stack: LocalStack, reconnect_every: int | None) -> list[dict]:
    """Every event of a run's stream until `end`, reconnecting with Last-Event-ID after each `reconnect_every`
    sample events (None: one connection)."""
    seen: list[dict] = []
    while not seen or seen[-1]["event"] != "end":
        headers = {"Last-Event-ID": seen[-1]["id"]} if seen else {}
        with stack.client() as again, again.stream("GET", url, headers=headers) as response:
            assert response.status_code == 200
            seen += _events(response, stop_after=reconnect_every)
    return seen


@pytest.mark.slow
def test_many_workers_recording_into_one_run_lose_repeat_and_reorder_no_event(
    stack: LocalStack, client: httpx.Client
) -> None:
    """64 simulated workers (as bench/queue_scale.py's: claim, record, check the run's end, through the worker's
    own functions) record into one run, in concurrent transactions that commit their event ids out of order,
    while SSE clients follow it, one of them reconnecting every few events: each sees every sample once, in
    increasing ids, then one end; the run ends once (one webhook call)."""
    from concurrent.futures import wait as wait_all

    from sandbox.executor import Outcome
    from sandbox.verdicts import Verdict
    from service.core.database import make_sync_engine, make_sync_sessionmaker, transaction
    from service.worker import queue, results

    workers, batch, count = 64, 2, 384
    stack.stop_workers()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    _Receiver.answers, _Receiver.calls = [], []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    engine = make_sync_engine(stack.database_url, pool_size=workers, max_overflow=0)
    sessions = make_sync_sessionmaker(engine)
    try:
        dataset = _dataset(client, "many-workers", problems=8)
        callback = f"http://127.0.0.1:{server.server_port}/hook"
        run = _run(client, dataset, _samples(count, problems=8), callback_url=callback).json()
        url = f"/v1/runs/{run['id']}/events"
        start = threading.Barrier(workers)

        def work(owner: str) -> int:
            recorded = 0
            start.wait()
            while True:
                with transaction(sessions) as session:
                    claimed = queue.claim_batch(session, owner, batch, 60.0, 3.0, 512, "sha256:test")
                if not claimed:
                    return recorded
                outcomes = [Outcome(id=str(s.id), verdict=Verdict.PASSED, duration_ms=1.0, cpu_ms=1.0) for s in claimed]
                with transaction(sessions) as session:
                    runs = results.record_outcomes(session, owner, claimed, outcomes, max_attempts=3)
                with transaction(sessions) as session:
                    results.end_runs(session, runs)
                recorded += len(claimed)

        with ThreadPoolExecutor(max_workers=workers + 3) as pool:
            followers = [pool.submit(_follow, url, stack, every) for every in (None, None, 25)]
            recorders = [pool.submit(work, f"simulated-{i}") for i in range(workers)]
            wait_all(recorders)
            assert sum(r.result() for r in recorders) == count
            streams = [f.result() for f in followers]
        samples = {row["id"] for row in client.get(f"/v1/runs/{run['id']}/samples", params={"limit": 1000}).json()["items"]}
        for seen in streams:
            ids = [int(event["id"]) for event in seen]
            assert ids == sorted(ids) and len(set(ids)) == len(ids), "an event was repeated or out of order"
            assert [event["event"] for event in seen] == ["sample"] * count + ["end"]
            assert {event["data"]["id"] for event in seen[:-1]} == samples, "an event was lost"
            assert seen[-1]["data"]["status"] == "completed" and seen[-1]["data"]["progress"]["done"] == count
        webhook = wait_until(
            lambda: (w := client.get(f"/v1/runs/{run['id']}").json()["webhook"])["state"] == "delivered" and w,
            timeout_s=120, what="the webhook to be delivered",
        )
        assert len(webhook["attempts"]) == 1 and len(_Receiver.calls) == 1, "the run ended more than once"
    finally:
        server.shutdown()
        engine.dispose()


def test_a_burst_past_the_database_pool_is_answered_busy_and_nothing_is_lost() -> None:
    """Every connection of the API's pool held (here: each of 11 /run_code calls waits for the admission lock,
    which the test holds): one more /run_code is answered 504 (SandboxFusion's clients retry it) and any other
    request 503 with Retry-After, never a 500; once the lock is let go, the 11 are run and answered once each."""
    import psycopg

    from service.api.delivery.admission import ADMISSION_LOCK

    env = {"PASSK_API_DB_POOL_SIZE": "1", "PASSK_API_DB_POOL_TIMEOUT_S": "1"}  # 1 kept + SQLAlchemy's 10 overflow
    with LocalStack(prefix="passk_pool", extra_env=env) as stack, stack.client() as client:
        stack.start_worker(concurrency=1)
        first = client.post("/run_code", json={"language": "python", "code": "print('warm')"})
        assert first.status_code == 200, first.text  # the key is verified and cached, the dataset made
        url = stack.database_url.replace("postgresql+psycopg", "postgresql")
        with psycopg.connect(url, autocommit=True) as holder, ThreadPoolExecutor(11) as pool:
            holder.execute("SELECT pg_advisory_lock(%s)", (ADMISSION_LOCK,))
            held = [pool.submit(client.post, "/run_code", json={"language": "python", "code": f"print({i})"})
                    for i in range(11)]

            def blocked() -> int:
                return holder.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                ).fetchone()[0]

            wait_until(lambda: blocked() == 11, 60, "11 calls waiting for the admission lock")
            busy_call = client.post("/run_code", json={"language": "python", "code": "print('one more')"})
            assert busy_call.status_code == 504, busy_call.text
            assert "busy" in busy_call.json()["detail"] and busy_call.headers["Retry-After"] == "1"
            busy_read = client.get("/v1/runs")
            assert busy_read.status_code == 503, busy_read.text
            assert "busy" in busy_read.json()["detail"] and busy_read.headers["Retry-After"] == "1"
            holder.execute("SELECT pg_advisory_unlock(%s)", (ADMISSION_LOCK,))
            answers = [future.result(timeout=120) for future in held]
        assert [answer.status_code for answer in answers] == [200] * 11, [answer.text for answer in answers]
        assert sorted(answer.json()["run_result"]["stdout"] for answer in answers) == sorted(f"{i}\n" for i in range(11))
        with psycopg.connect(url) as db:
            stored = db.execute("SELECT count(*) FROM runs WHERE model = 'run_code'").fetchone()[0]
        assert stored == 12  # the first, the 11; the busy call stored nothing
