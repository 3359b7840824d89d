"""The dashboard's pages tell the truth and fit a phone, in Chromium through the real stack.

One 16-problem HumanEval dataset, 16 samples per problem (curves over k = 1..16, on a log axis): two full
runs of one model at one temperature (the same legend name; the better one solves every problem within 16
samples, so its pass@16 has the exact interval), a run over 10 of the problems, all judged by
real workers; a colleague's key of the same project submits later on a dataset of its own.

- Charts: every drawn estimate lies inside its drawn band, read from the rendered SVG at every x.
- 390 px: no page scrolls sideways and the key figure (pass@1) is on screen without scrolling sideways.
- Leaderboard: opens on the viewer's own last dataset, ranks subset runs apart, legend off the plot.
- Problem page: one stderr without passk's frames, search across the samples, previous / next.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.e2e.conftest import Stack, wait_for_run
from tests.e2e.test_dashboard import (  # noqa: F401 - fixtures used by name
    _console_errors,
    _new_context,
    browser,
    client,
    create_dataset,
    humaneval_slice,
    login,
    make_samples,
    shot,
    submit,
)
from tests.e2e.test_projects import operator
from tests.e2e.test_cli import ok

pytestmark = pytest.mark.slow

PROBLEMS = 16
SUBSET = 10
N = 16
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def board(stack: Stack, client: httpx.Client) -> dict[str, Any]:  # noqa: F811
    problems = humaneval_slice(PROBLEMS)
    dataset = create_dataset(client, "HumanEval-pages", problems)
    subset = dict(list(problems.items())[:SUBSET])
    colleague_key = ok(operator(stack, "keys", "create", "--name", "colleague")).stdout.strip()
    stack.start_worker(concurrency=2)
    try:
        low = submit(client, dataset["id"], "pages-model", {"temperature": 0.8}, make_samples(problems, N, 0.15, 11))
        high = submit(client, dataset["id"], "pages-model", {"temperature": 0.8}, make_samples(problems, N, 0.9, 12))
        part = submit(client, dataset["id"], "pages-subset", {"temperature": 0.8}, make_samples(subset, N, 0.45, 13))
        runs = [wait_for_run(client, run["id"]) for run in (low, high, part)]
        # Later, a colleague (another key of the project) uses another dataset.
        with stack.client(api_key=colleague_key) as theirs:
            other = theirs.post("/v1/datasets", json={"name": "colleague-set", "problems": list(humaneval_slice(2).values())})
            assert other.status_code in (200, 201), other.text
            their_run = theirs.post("/v1/runs", json={"dataset_id": other.json()["id"], "model": "theirs", "sampling": {"temperature": 0.0},
                                                      "samples": make_samples(humaneval_slice(2), 1, 0.5, 14)})
            assert their_run.status_code == 202, their_run.text
            wait_for_run(theirs, their_run.json()["id"])
    finally:
        stack.stop_workers()
    assert all(run["status"] == "completed" for run in runs), runs
    return {"dataset": dataset, "low": runs[0], "high": runs[1], "subset": runs[2], "other_dataset": other.json()}


@pytest.fixture(scope="module")
def viewer(browser: Browser, stack: Stack) -> Iterator[BrowserContext]:  # noqa: F811
    context = _new_context(browser, stack)
    page = context.new_page()
    page.goto("/login")
    login(page, stack.api_key)
    page.close()
    yield context
    assert not context.offsite, context.offsite  # type: ignore[attr-defined]
    context.close()


# ---------------------------------------------------------------- charts

_SVG_SHAPES = """(root) => {
  const out = [];
  for (const path of root.querySelectorAll('path.curve-line')) {
    const key = path.dataset.series;
    const band = root.querySelector(`polygon.band[data-series="${CSS.escape(key)}"]`);
    out.push({ key, d: path.getAttribute('d'), band: band ? band.getAttribute('points') : null });
  }
  return out;
}"""


def _pairs(text: str) -> list[tuple[float, float]]:
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", text)]
    return list(zip(numbers[::2], numbers[1::2], strict=True))


def _at(points: list[tuple[float, float]], x: float) -> float:
    """The y of a polyline (x increasing) at x: straight between its points, as the SVG draws it."""
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        if x0 - 1e-6 <= x <= x1 + 1e-6:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    raise AssertionError(f"x = {x} lies outside the band's {points[0][0]} … {points[-1][0]}")


def assert_curves_inside_bands(page: Page, chart: str, expected: int) -> list[int]:
    """Every drawn curve has a band, spans exactly it, and lies inside it at every x (a tenth of an SVG unit of
    rounding). Returns each curve's number of points."""
    expect(page.locator(f"{chart} polygon.band")).to_have_count(expected, timeout=60_000)
    shapes = page.locator(chart).evaluate(_SVG_SHAPES)
    assert len(shapes) == expected, shapes
    for shape in shapes:
        curve = _pairs(shape["d"])
        corners = _pairs(shape["band"])
        top, bottom = corners[: len(corners) // 2], corners[len(corners) // 2:][::-1]
        assert len(curve) >= 2 and [x for x, _ in curve] == [x for x, _ in top] == [x for x, _ in bottom], shape
        xs = sorted({x for x, _ in curve} | {x for x, _ in top})
        xs += [(a + b) / 2 for a, b in zip(xs, xs[1:], strict=False)]  # between the points too
        for x in xs:
            y, hi, lo = _at(curve, x), _at(top, x), _at(bottom, x)  # SVG y grows downwards: hi is above
            assert hi - 0.1 <= y <= lo + 0.1, (shape["key"], x, hi, y, lo)
    return [len(_pairs(shape["d"])) for shape in shapes]


def test_every_curve_stays_inside_its_band(viewer: BrowserContext, board: dict[str, Any]) -> None:
    page = viewer.new_page()
    errors = _console_errors(page)
    page.goto(f"/leaderboard?dataset_id={board['dataset']['id']}")
    # The two full runs (the subset run is not ticked), each at every k of the grid: here k = 1..16.
    assert assert_curves_inside_bands(page, "#leaderboard-chart", 2) == [N, N]
    page.goto(f"/runs/{board['low']['id']}")
    assert assert_curves_inside_bands(page, "#curve-chart", 2) == [N, N]  # pass@k and pass^k
    assert not errors, errors
    page.close()


# ---------------------------------------------------------------- leaderboard


def test_leaderboard_opens_on_the_viewers_dataset_and_ranks_subsets_apart(
    browser: Browser, stack: Stack, board: dict[str, Any]  # noqa: F811
) -> None:
    context = _new_context(browser, stack)
    page = context.new_page()
    errors = _console_errors(page)
    page.goto("/login")
    login(page, stack.api_key)
    page.goto("/leaderboard")
    # Not the colleague's later dataset (the newest one): the viewer's own last run's.
    expect(page.locator("#lb-dataset")).to_have_value(board["dataset"]["id"])
    full = page.locator("#leaderboard-body tr[data-run-id]")
    expect(full).to_have_count(2, timeout=30_000)
    subset_rows = page.locator("#leaderboard-subset-body tr[data-run-id]")
    expect(subset_rows).to_have_count(1)
    expect(subset_rows.first).to_have_attribute("data-run-id", board["subset"]["id"])
    expect(subset_rows.first.locator(".subset-flag")).to_be_visible()
    # The legend: under the plot, one entry per charted run, no two alike (same model and temperature).
    legend = page.locator("#leaderboard-chart .chart-legend li")
    expect(legend).to_have_count(2, timeout=60_000)
    names = legend.all_inner_texts()
    assert len(set(names)) == 2 and all(n.startswith("pages-model T=0.8 · ") for n in names), names
    plot = page.locator("#leaderboard-chart svg").bounding_box()
    first = legend.first.bounding_box()
    assert plot and first and first["y"] >= plot["y"] + plot["height"] - 1, (plot, first)
    shot(page, "leaderboard-subsets")
    # A dataset chosen here is where the leaderboard opens next time (this browser, this project).
    page.select_option("#lb-dataset", board["other_dataset"]["id"])
    expect(page.locator("#leaderboard-body tr[data-run-id]")).to_have_count(1, timeout=30_000)
    page.goto("/leaderboard")
    expect(page.locator("#lb-dataset")).to_have_value(board["other_dataset"]["id"])
    assert not errors, errors
    context.close()


# ---------------------------------------------------------------- problem page


def test_problem_page_traceback_search_and_neighbours(viewer: BrowserContext, client: httpx.Client,  # noqa: F811
                                                      board: dict[str, Any]) -> None:
    run_id = board["low"]["id"]
    keys = list(humaneval_slice(PROBLEMS))
    errored = None
    for key in keys[1:-1]:
        samples = client.get(f"/v1/runs/{run_id}/samples", params={"problem_id": key, "verdict": "error", "limit": 50}).json()["items"]
        errored = next((s for s in samples if "candidate.py" in (s["stderr"] or "")), None)
        if errored:
            break
    assert errored, "no errored sample with passk's frames in its stderr"
    assert "candidate.py" not in errored["traceback"] and "Traceback (most recent call last)" in errored["traceback"]
    key = errored["problem_id"]
    page = viewer.new_page()
    errors = _console_errors(page)
    page.goto(f"/runs/{run_id}/problems/{key}?sample={errored['id']}")
    stderr = page.locator("#sample-stderr")
    expect(stderr).to_contain_text("ValueError")
    # Shown once, without passk's frames; a button shows the stderr as printed.
    assert page.locator("#sample-detail").inner_text().count("Traceback (most recent call last)") == 1
    assert "candidate.py" not in stderr.inner_text() and "wire.encode" not in stderr.inner_text()
    page.click("#stderr-raw")
    expect(stderr).to_contain_text("candidate.py")
    page.click("#stderr-raw")
    expect(stderr).not_to_contain_text("candidate.py")
    # Search across the problem's samples: code and output.
    tag = f"{key} sample 1 seed 11"
    page.fill("#sample-search", tag)
    expect(page.locator("#sample-search-count")).to_have_text(f"1 of {N} samples contain “{tag}”")
    expect(page.locator("#samples-body tr.sample-row")).to_have_count(1)
    page.fill("#sample-search", "ValueError")
    expect(page.locator("#sample-search-count")).to_contain_text(f"of {N} samples contain")
    shown = page.locator("#samples-body tr.sample-row").count()
    assert 1 <= shown < N
    page.fill("#sample-search", "")
    expect(page.locator("#samples-body tr.sample-row")).to_have_count(N)
    # Previous and next problem.
    position = keys.index(key)
    expect(page.locator("#prev-problem")).to_have_text(f"← {keys[position - 1]}")
    page.click("#next-problem")
    expect(page.locator("#problem-title")).to_have_text(keys[position + 1])
    # The docs are a click away.
    expect(page.locator("#nav-guide")).to_have_attribute("href", "/guide/")
    expect(page.locator("#nav-api")).to_have_attribute("href", "/docs")
    assert page.request.get("/docs").ok
    assert not errors, errors
    page.close()


# ---------------------------------------------------------------- 390 px


def test_every_page_fits_a_phone(browser: Browser, stack: Stack, client: httpx.Client,  # noqa: F811
                                 board: dict[str, Any]) -> None:
    low, high = board["low"]["id"], board["high"]["id"]
    problem = next(iter(humaneval_slice(1)))
    context = _new_context(browser, stack)
    page = context.new_page()
    page.set_viewport_size(PHONE)
    scroll_width = lambda: page.evaluate("document.documentElement.scrollWidth")  # noqa: E731
    page.goto("/login")
    wide = {"/login": scroll_width()}
    login(page, stack.api_key)
    # page -> (what shows it is ready, the key figure that must be on screen without scrolling sideways)
    pages = {
        "/": ("#runs-body tr[data-run-id] .pass1", "#runs-body tr[data-run-id] .pass1"),
        f"/leaderboard?dataset_id={board['dataset']['id']}": ("#leaderboard-chart path.curve-line",
                                                               '#leaderboard-body td[data-k="1"] .estimate'),
        f"/runs/{low}": ("#curve-chart polygon.band", "#stat-pass1"),
        # every problem solved within n: pass@n's interval is the exact (Clopper-Pearson) one, the longest label
        f"/runs/{high}": ("#curve-chart polygon.band", "#stat-pass1"),
        f"/runs/{low}/problems/{problem}": ("#samples-body tr.sample-row", "#problem-counts"),
        f"/compare?base={low}&candidate={high}&k=1": ("#compare-metrics tbody tr", "#compare-metrics tbody tr td"),
        f"/languages?runs={low},{high}": ("#languages-result", None),
        "/runs/00000000-0000-0000-0000-000000000000": ("main", None),
    }
    off_screen = {}
    for number, (path, (ready, figure)) in enumerate(pages.items()):
        page.goto(path)
        expect(page.locator(ready).first).to_be_visible(timeout=60_000)
        page.wait_for_load_state("networkidle")
        wide[path] = scroll_width()
        if figure:
            box = page.locator(figure).first.bounding_box()
            if not box or box["x"] < 0 or box["x"] + box["width"] > PHONE["width"]:
                off_screen[path] = box
        name = "problem" if "/problems/" in path else (path.split("?")[0].strip("/").split("/")[0] or "runs-list")
        shot(page, f"phone-{number}-{name}")
    assert all(w <= PHONE["width"] for w in wide.values()), {p: w for p, w in wide.items() if w > PHONE["width"]}
    assert not off_screen, off_screen
    # Chart text stays legible when the chart shrinks to the screen: tick labels at least 9 px tall.
    page.goto(f"/runs/{low}")
    expect(page.locator("#curve-chart polygon.band").first).to_be_attached(timeout=30_000)
    heights = page.evaluate("[...document.querySelectorAll('#curve-chart text.tick')].map((t) => t.getBoundingClientRect().height)")
    assert heights and min(heights) >= 9, heights
    context.close()
