"""The re-run lane's rules without Docker: fair turns between keys and runs, and a gate closed only briefly.

The lane through the real stack is tested in tests/e2e/test_cache_and_reruns.py.
"""

from __future__ import annotations

import threading
import uuid

from sandbox.executor import Job
from service.worker.batch import Rerun
from service.worker.gate import ExclusiveGate
from service.worker.lane import RerunQueue
from service.worker.queue import ClaimedSample

WAIT_S = 30.0  # a safety net for the events below, never a measured duration


def rerun(run: uuid.UUID, sample_id: int, key: uuid.UUID | None = None) -> Rerun:
    sample = ClaimedSample(sample_id, run, "p", "x", 3.0, 1 << 29, 1, api_key_id=key)
    return Rerun(Job(str(sample_id), "x", 3.0, 1 << 29), [sample])


def test_runs_take_turns_in_the_lane() -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    lane = RerunQueue()
    for sample_id in (1, 2, 3):
        lane.put(rerun(a, sample_id))  # one run's many sleepers first...
    lane.put(rerun(b, 10))  # ...do not keep another run's one re-run waiting behind all of them
    order = [lane.get(0).samples[0].id for _ in range(4)]
    assert order == [1, 10, 2, 3]
    assert lane.get(0) is None and len(lane) == 0


def test_keys_take_turns_in_the_lane_and_runs_within_a_key() -> None:
    """One key's sleepers, over many runs, delay another key's re-run by one turn at most."""
    key_a, key_b = uuid.uuid4(), uuid.uuid4()
    a1, a2, b = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    lane = RerunQueue()
    for sample_id in (1, 2, 3):
        lane.put(rerun(a1, sample_id, key_a))
    for sample_id in (4, 5):
        lane.put(rerun(a2, sample_id, key_a))
    lane.put(rerun(b, 10, key_b))
    order = [lane.get(0).samples[0].id for _ in range(6)]
    assert order == [1, 10, 4, 2, 5, 3]
    assert lane.get(0) is None and len(lane) == 0


def test_a_stopping_lane_hands_back_everything_waiting() -> None:
    lane = RerunQueue()
    lane.put(rerun(uuid.uuid4(), 1))
    lane.put(rerun(uuid.uuid4(), 2))
    assert sorted(r.samples[0].id for r in lane.drain()) == [1, 2] and len(lane) == 0


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_gate_is_closed_at_most_its_share_of_any_window() -> None:
    clock = FakeClock()
    gate = ExclusiveGate(share=0.2, window_s=60.0, clock=clock)
    assert gate.budget(clock.now) == 12.0
    with gate.exclusive(4.0) as granted:
        clock.now += 4.0
    assert granted == 4.0 and gate.budget(clock.now) == 8.0
    with gate.exclusive(61.0) as granted:  # a 60 s limit asks for 61 s: it gets what is left of the share
        clock.now += 1.0  # ...and gives back what it did not use
    assert granted == 8.0 and gate.budget(clock.now) == 7.0
    clock.now += 60.0
    assert gate.budget(clock.now) == 12.0
    with ExclusiveGate(share=0.0, clock=clock).exclusive(5.0) as granted:
        assert granted == 0.0


def test_frames_start_again_when_the_window_ends_though_the_rerun_still_runs() -> None:
    gate = ExclusiveGate(share=1.0, window_s=60.0)
    frame_started = threading.Event()

    def frame() -> None:
        with gate.shared():
            frame_started.set()

    with gate.exclusive(0.2):
        thread = threading.Thread(target=frame)
        thread.start()
        # The re-run is still inside its exclusive block, yet the other thread's frame gets to start.
        assert frame_started.wait(WAIT_S)
    thread.join(WAIT_S)


def test_a_closed_gate_lets_no_frame_start_while_its_window_lasts() -> None:
    asked = threading.Event()
    order: list[str] = []

    def clock() -> float:
        # The frame asks the time while it holds the gate's lock, and keeps that lock until it waits: once
        # it has asked, the re-run below cannot leave before the frame is waiting at the closed gate.
        if threading.current_thread().name == "frame":
            asked.set()
        return 1000.0

    def frame() -> None:
        with gate.shared():
            order.append("frame")

    gate = ExclusiveGate(share=1.0, window_s=600.0, clock=clock)
    with gate.exclusive(300.0):
        thread = threading.Thread(target=frame, name="frame")
        thread.start()
        assert asked.wait(WAIT_S)
        order.append("rerun done")
    thread.join(WAIT_S)
    assert order == ["rerun done", "frame"]
