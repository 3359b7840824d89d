"""The sandboxes' parent cgroup (sandbox/cgroups.py) on fake v1 and v2 hierarchies, and the worker's wiring."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.cgroups import docker_parent, ensure_parent, shares_to_weight
from service.core.settings import Settings
from service.worker.runner import Worker


def test_shares_convert_to_weights_as_runc_does() -> None:
    assert shares_to_weight(2) == 1
    assert shares_to_weight(262144) == 10000
    assert shares_to_weight(1024) == 39  # runc's figure for Docker's default
    assert shares_to_weight(256) == 10


def test_docker_parent_names() -> None:
    assert docker_parent("passk-sandboxes") == "/passk-sandboxes"
    assert docker_parent("/a/b/") == "/a/b"
    assert docker_parent("passk.slice") == "passk.slice"


def test_v1_parent_is_made_under_the_cpu_controller_with_its_shares(tmp_path: Path) -> None:
    (tmp_path / "cpu").mkdir()
    made = ensure_parent("passk-sandboxes", 256, root=tmp_path)
    assert made == tmp_path / "cpu" / "passk-sandboxes"
    assert (made / "cpu.shares").read_text() == "256\n"
    assert ensure_parent("/passk-sandboxes/", 128, root=tmp_path) == made  # idempotent, weight updated
    assert (made / "cpu.shares").read_text() == "128\n"


def test_v2_parent_gets_a_weight(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("memory pids\n")
    made = ensure_parent("passk-sandboxes", 256, root=tmp_path)
    assert made == tmp_path / "passk-sandboxes"
    assert (made / "cpu.weight").read_text() == "10\n"
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+cpu\n"  # the root hands cpu down


def test_a_systemd_slice_or_an_unwritable_hierarchy_is_left_alone(tmp_path: Path) -> None:
    assert ensure_parent("passk.slice", 256, root=tmp_path) is None
    assert not any(tmp_path.iterdir())
    (tmp_path / "cpu").write_text("")  # a file where the controller directory should be: mkdir fails
    assert ensure_parent("passk-sandboxes", 256, root=tmp_path) is None


@pytest.mark.parametrize("name", ["", "/", "../x", "a/../../b"])
def test_bad_names_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError):
        ensure_parent(name, 256, root=tmp_path)


def test_the_worker_passes_the_setting_to_its_sandboxes() -> None:
    url = "postgresql+psycopg://nobody@127.0.0.1:1/none"  # the engine is created, never connected
    default = Worker(Settings(), url, "passk-sandbox:test", concurrency=1)
    assert default.cgroup_parent is None and default._new_sandbox().settings.cgroup_parent is None
    worker = Worker(Settings(sandbox_cgroup_parent="passk-sandboxes"), url, "passk-sandbox:test", concurrency=1)
    assert worker._new_sandbox().settings.cgroup_parent == "/passk-sandboxes"
