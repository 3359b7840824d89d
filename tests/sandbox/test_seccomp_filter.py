"""The monitor's filter (sandbox/runtime/seccomp.py), as bytes: the template a candidate fills in is the filter
laid out for its own pids. What the filter does to a real candidate is shown in tests/e2e/test_reward_hacks.py."""

from __future__ import annotations

import random

from sandbox.runtime import seccomp


def test_the_filled_in_template_is_the_filter_laid_out_for_those_pids() -> None:
    rng = random.Random(7)
    cases = [[], [1], [1, 2, 3], [1, 4_194_304, 4_194_303], [1, 17, 17]]
    cases += [[1] + [rng.randrange(2, 1 << 22) for _ in range(count)] for count in range(1, 8) for _ in range(20)]
    for protected in cases:
        assert seccomp.packed(protected) == seccomp._packed(protected), protected


def test_more_pids_than_slots_are_laid_out_for_them() -> None:
    protected = list(range(1, 12))  # 23 targets: more than the template's slots
    code = seccomp.packed(protected)
    assert code == seccomp._packed(protected)
    assert len(code) > len(seccomp._TEMPLATE)
    ks = {seccomp._INSTRUCTION.unpack_from(code, offset)[3] for offset in range(0, len(code), seccomp._INSTRUCTION.size)}
    assert {pid for pid in protected} | {(-pid) & 0xFFFFFFFF for pid in protected} <= ks
