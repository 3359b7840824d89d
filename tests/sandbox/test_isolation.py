"""Every container limit, shown holding against real programs in the real sandbox image."""

from __future__ import annotations

import os
import socket
import subprocess
import textwrap
import time

import docker

from sandbox.container import (
    LABEL_OWNER,
    LABEL_ROLE,
    ROLE_SANDBOX,
    SUPERVISOR_CAPABILITIES,
    SUPERVISOR_USER,
    pid_space,
    sweep,
)
from sandbox.executor import Sandbox
from sandbox.verdicts import Verdict
from tests.sandbox.programs import run_many, run_one


# True when every process but the caller is root's: PID 1 and its helpers (the zygote, the judge template), i.e.
# nothing a program started.
ONLY_THE_SANDBOX_LEFT = (
    "all(open(f'/proc/{p}/status').read().split('Uid:')[1].split()[0] == '0' "
    "for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid())"
)


def checked(body: str) -> str:
    """A human-eval shaped program whose check() asserts what `body` establishes."""
    return textwrap.dedent(body) + "\ndef check(candidate):\n    assert candidate()\n\ncheck(probe)\n"


def test_a_correct_program_passes_and_a_wrong_one_fails(sandbox: Sandbox) -> None:
    ok, wrong, error, syntax = run_many(
        sandbox,
        [
            checked("def probe():\n    return True\n"),
            checked("def probe():\n    return False\n"),
            checked("def probe():\n    raise ValueError('boom')\n"),
            "def probe(:\n",
        ],
    )
    assert ok.verdict is Verdict.PASSED
    assert wrong.verdict is Verdict.FAILED and "AssertionError" in (wrong.detail or "")
    assert error.verdict is Verdict.ERROR and "ValueError: boom" in (error.detail or "")
    assert syntax.verdict is Verdict.ERROR and "SyntaxError" in (syntax.detail or "")


def test_no_network_only_loopback(sandbox: Sandbox, docker_client: docker.DockerClient) -> None:
    # Checked without sending a packet anywhere: the namespace has no interface but lo and no route.
    outcome = run_one(
        sandbox,
        checked(
            """
            import socket
            def probe():
                names = [name for _, name in socket.if_nameindex()]
                with open('/proc/net/route') as f:
                    routes = f.read().splitlines()[1:]
                try:
                    socket.getaddrinfo('example.com', 80)
                    resolved = True
                except OSError:
                    resolved = False
                return names == ['lo'] and routes == [] and not resolved
            """
        ),
    )
    assert outcome.verdict is Verdict.PASSED, outcome
    container_id = sandbox.container_id
    assert container_id is not None
    host_config = docker_client.api.inspect_container(container_id)["HostConfig"]
    assert host_config["NetworkMode"] == "none"


def test_container_is_hardened(sandbox: Sandbox, docker_client: docker.DockerClient) -> None:
    outcome = run_one(
        sandbox,
        checked(
            """
            import os
            def probe():
                status = dict(line.split(':\\t', 1) for line in open('/proc/self/status').read().splitlines() if ':\\t' in line)
                return (os.getuid() == 10001 and os.geteuid() == 10001
                        and int(status['CapEff'], 16) == 0 and int(status['CapBnd'], 16) == 0
                        and status['NoNewPrivs'].strip() == '1'
                        and not os.path.exists('/var/run/docker.sock') and not os.path.exists('/run/docker.sock')
                        and set(os.environ) <= {'HOME', 'TMPDIR', 'PATH', 'LANG'})
            """
        ),
    )
    assert outcome.verdict is Verdict.PASSED, outcome
    container_id = sandbox.container_id
    assert container_id is not None
    attrs = docker_client.api.inspect_container(container_id)
    host = attrs["HostConfig"]
    assert host["ReadonlyRootfs"] is True
    assert host["CpuShares"] == sandbox.settings.cpu_shares  # the worker's setting reaches the container
    # PID 1 keeps only what it needs to drop every other process to an unprivileged uid (checked above).
    assert host["CapDrop"] == ["ALL"] and sorted(host["CapAdd"]) == sorted(SUPERVISOR_CAPABILITIES)
    assert host["Sysctls"] == {"kernel.shm_rmid_forced": "1"}
    assert "no-new-privileges" in host["SecurityOpt"]
    assert host["Privileged"] is False
    assert host["Memory"] > 0 and host["PidsLimit"] == 64 and host["NanoCpus"] == 1_000_000_000
    assert attrs["Mounts"] == [] and not host["Binds"]
    assert attrs["Config"]["User"] == SUPERVISOR_USER
    assert not any(key.startswith(("PASSK", "DATABASE", "PG")) for key in attrs["Config"]["Env"] or [])
    assert attrs["Config"]["Labels"][LABEL_ROLE] == ROLE_SANDBOX
    assert attrs["Config"]["StopSignal"] == "SIGKILL"  # PID 1 ignores SIGTERM; `docker stop` should not wait


def test_read_only_root_and_capped_scratch(sandbox: Sandbox) -> None:
    outcome = run_one(
        sandbox,
        checked(
            """
            import errno, os
            def probe():
                refused = 0
                for path in ('/usr/evil', '/etc/evil', '/opt/passk/supervisor.py', '/evil'):
                    try:
                        open(path, 'w').write('x')
                    except OSError as exc:
                        refused += exc.errno in (errno.EROFS, errno.EACCES)
                open('scratch.txt', 'w').write('fine')
                try:
                    with open('big', 'wb') as f:
                        for _ in range(200):
                            f.write(b'x' * (1 << 20))
                    capped = False
                except OSError:
                    capped = True
                return refused == 4 and capped
            """
        ),
    )
    assert outcome.verdict is Verdict.PASSED, outcome


def test_memory_cap(sandbox: Sandbox) -> None:
    hog, fine = run_many(
        sandbox,
        [
            "x = bytearray(1 << 30)\n",
            checked("def probe():\n    return len(bytearray(64 << 20)) == 64 << 20\n"),
        ],
        memory_mb=256,
    )
    assert hog.verdict is Verdict.MEMORY
    assert fine.verdict is Verdict.PASSED, fine


def test_pids_cap(sandbox: Sandbox) -> None:
    outcome = run_one(
        sandbox,
        checked(
            """
            import os, time
            def probe():
                started = 0
                for _ in range(200):
                    try:
                        pid = os.fork()
                    except OSError:
                        break
                    if pid == 0:
                        time.sleep(30)
                        os._exit(0)
                    started += 1
                return started < 64
            """
        ),
    )
    assert outcome.verdict is Verdict.PASSED, outcome
    assert outcome.leftover_processes


def test_time_limits_cpu_wall_and_ignored_signals(sandbox: Sandbox) -> None:
    outcomes = run_many(
        sandbox,
        [
            "while True:\n    pass\n",
            "import time\ntime.sleep(60)\n",
            "import signal\nfor s in (signal.SIGXCPU, signal.SIGTERM, signal.SIGINT):\n    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    pass\n",
            # A child that ignores signals and sleeps: the parent's end must end it too.
            "import os, signal, time\nif os.fork() == 0:\n    os.setsid()\n    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n    time.sleep(600)\nwhile True:\n    pass\n",
        ],
        time_limit_s=1.0,
    )
    for outcome in outcomes:
        assert outcome.verdict is Verdict.TIMEOUT, outcome
        # Stopped by the limit, not by the program's own end (60 s, 600 s); how fast is bench/'s business.
        assert outcome.duration_ms is not None and outcome.duration_ms < 30_000
    # Nothing a timed-out program started survives into the next program's container.
    after = run_one(
        sandbox,
        checked(f"import os\ndef probe():\n    return {ONLY_THE_SANDBOX_LEFT}\n"),
    )
    assert after.verdict is Verdict.PASSED, after


def test_output_is_capped(sandbox: Sandbox) -> None:
    outcome = run_one(
        sandbox,
        checked("import sys\ndef probe():\n    for _ in range(200):\n        sys.stdout.write('y' * (1 << 20))\n    print('e' * 10, file=sys.stderr)\n    return True\n"),
        time_limit_s=10.0,
    )
    assert outcome.verdict is Verdict.PASSED, outcome.detail
    assert outcome.stdout_truncated and len(outcome.stdout) == 4096 and set(outcome.stdout) == {"y"}
    assert outcome.stderr.strip() == "e" * 10 and not outcome.stderr_truncated


def test_early_exit_and_forgery_never_pass(sandbox: Sandbox) -> None:
    tests = "\ndef check(candidate):\n    assert candidate() == 1\n\ncheck(f)\n"
    cheats = [
        "import os\nos._exit(0)\ndef f():\n    return 2\n",
        "import sys\nsys.exit(0)\ndef f():\n    return 2\n",
        "raise SystemExit(0)\ndef f():\n    return 2\n",
        "print('passed')\nprint('PASS')\nimport os\nos._exit(0)\n",
        "import os\nos.write(3, b'PASS ' + b'0' * 64)\nos._exit(0)\n",
        "import atexit, os\natexit.register(lambda: os._exit(0))\ndef f():\n    return 2\n",
        "import sys, os\nsys.excepthook = lambda *a: os._exit(0)\ndef f():\n    return 2\n",
        "import os, signal\nfor pid in range(1, 40):\n    try:\n        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass\ndef f():\n    return 2\n",
        "import builtins\nbuiltins.AssertionError = type('X', (BaseException,), {})\ndef f():\n    return 2\n",
    ]
    outcomes = run_many(sandbox, [cheat + tests for cheat in cheats])
    for cheat, outcome in zip(cheats, outcomes, strict=True):
        assert outcome.verdict is not Verdict.PASSED, cheat
    # The container survived the attempt on its supervisor and still judges honestly.
    assert run_one(sandbox, "def f():\n    return 1\n" + tests).verdict is Verdict.PASSED


def test_one_program_cannot_touch_the_next(sandbox: Sandbox) -> None:
    first, second = run_many(
        sandbox,
        [
            checked(
                "import os, subprocess\ndef probe():\n    open('/tmp/planted', 'w').write('x')\n    open('/dev/shm/planted', 'w').write('x')\n"
                "    subprocess.Popen(['sleep', '300'], start_new_session=True)\n    return True\n"
            ),
            checked(
                "import os\ndef probe():\n    return (not os.path.exists('/tmp/planted') and not os.path.exists('/dev/shm/planted')\n"
                f"            and {ONLY_THE_SANDBOX_LEFT})\n"
            ),
        ],
    )
    assert first.verdict is Verdict.PASSED and first.leftover_processes
    assert second.verdict is Verdict.PASSED, second


def test_containers_are_labelled_removed_and_swept(sandbox: Sandbox, docker_client: docker.DockerClient, sandbox_image: str) -> None:
    run_one(sandbox, "pass\n")
    name = sandbox.container_name
    assert name is not None
    sandbox.close()
    assert not docker_client.containers.list(all=True, filters={"name": name})
    # A leftover from a crashed worker: created, never cleaned up by its owner.
    leftover = docker_client.containers.create(sandbox_image, labels={LABEL_ROLE: ROLE_SANDBOX, LABEL_OWNER: "dead", "passk.created": "0"})
    assert sweep(docker_client, max_age_s=3600) >= 1
    assert not docker_client.containers.list(all=True, filters={"id": leftover.id})


def test_sweep_removes_a_dead_workers_unstarted_container_at_once(docker_client: docker.DockerClient, sandbox_image: str) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid that no longer runs
    labels = {LABEL_ROLE: ROLE_SANDBOX, LABEL_OWNER: f"{pid_space()}-{gone.pid}-abc123", "passk.created": str(int(time.time()))}
    orphan = docker_client.containers.create(sandbox_image, labels=labels)
    live = docker_client.containers.create(sandbox_image, labels={**labels, LABEL_OWNER: f"{pid_space()}-{os.getpid()}-abc123"})
    # Same hostname, other PID namespace (a containerised worker on the host network): its pid says nothing here.
    elsewhere = docker_client.containers.create(
        sandbox_image, labels={**labels, LABEL_OWNER: f"{socket.gethostname()}.pidns1-{gone.pid}-abc123"}
    )
    try:
        sweep(docker_client, max_age_s=3600)
        assert not docker_client.containers.list(all=True, filters={"id": orphan.id})
        assert docker_client.containers.list(all=True, filters={"id": live.id})  # its owner may still start it
        assert docker_client.containers.list(all=True, filters={"id": elsewhere.id})
    finally:
        live.remove(force=True)
        elsewhere.remove(force=True)
