"""Sandbox containers under a parent cgroup of lower CPU weight (Settings.sandbox_cgroup_parent), for real."""

from __future__ import annotations

import os
from pathlib import Path

import docker

from sandbox.cgroups import CGROUP_ROOT, cgroup_version, docker_parent, ensure_parent
from sandbox.executor import Sandbox, SandboxSettings
from sandbox.verdicts import Verdict
from tests.sandbox.programs import run_one


def test_containers_run_under_the_parent_cgroup_at_its_weight(docker_client: docker.DockerClient, sandbox_image: str) -> None:
    name = f"passk-tests-cgroup-{os.getpid()}"
    made = ensure_parent(name, 128)
    assert made is not None, "this host's cgroup hierarchy is writable (root, cgroupfs driver)"
    box = Sandbox(docker_client, SandboxSettings(image=sandbox_image, owner="passk-tests", cgroup_parent=docker_parent(name)))
    try:
        outcome = run_one(box, "def f():\n    return 1\n\ndef check(candidate):\n    assert candidate() == 1\n\ncheck(f)\n")
        assert outcome.verdict is Verdict.PASSED, outcome
        attrs = docker_client.api.inspect_container(box.container_id)
        assert attrs["HostConfig"]["CgroupParent"] == f"/{name}"
        # Seen from the host: the container's processes are in a cgroup below the parent, whose weight is ours.
        lines = Path(f"/proc/{attrs['State']['Pid']}/cgroup").read_text().splitlines()
        if cgroup_version() == 2:
            path = next(line.split(":", 2)[2] for line in lines if line.startswith("0::"))
            assert (made / "cpu.weight").read_text().strip() == "5"
        else:
            path = next(line.split(":", 2)[2] for line in lines if "cpu" in line.split(":", 2)[1].split(","))
            assert (made / "cpu.shares").read_text().strip() == "128"
        assert path.startswith(f"/{name}/"), path
    finally:
        box.close()
        # The engine made the parent under every other controller too (cgroup v1): remove what is left.
        for top in [CGROUP_ROOT, *CGROUP_ROOT.iterdir()]:
            parent = top / name
            if parent.is_dir():
                for directory in sorted((d for d in parent.rglob("*") if d.is_dir()), reverse=True) + [parent]:
                    try:
                        directory.rmdir()
                    except OSError:
                        pass
