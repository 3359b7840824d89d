"""deploy/kubernetes/, checked offline: every manifest against a pinned Kubernetes version's schemas
(kubernetes-validate, strict: an unknown field is an error), every setting it sets a real one, and every
command, port, probe and user it names one the service image really has."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from service.cli import build_parser
from service.core.settings import Settings

REPO = Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "deploy" / "kubernetes"
# The oldest version the manifests need: native sidecars (an init container with restartPolicy: Always)
# are on by default from 1.29.
KUBERNETES_VERSION = "1.31.0"
IMAGE = "passk-service"
# Environment variables that are not passk's Settings, and who reads them.
OTHER_VARIABLES = {
    "DOCKER_HOST": "the Docker SDK in the worker (sandbox/engine.py)",
    "DOCKER_TLS_CERTDIR": "the docker:dind image's entrypoint (empty: no TLS, a unix socket only)",
}


def _documents(path: Path) -> list[dict]:
    return [document for document in yaml.safe_load_all(path.read_text()) if document]


def _resources() -> list[tuple[str, dict]]:
    return [
        (path.name, document)
        for path in sorted(MANIFESTS.glob("*.yaml")) if path.name != "kustomization.yaml"
        for document in _documents(path)
    ]


def _pod_specs() -> list[tuple[str, dict]]:
    specs = []
    for _, resource in _resources():
        if resource["kind"] in ("Deployment", "Job"):
            specs.append((resource["metadata"]["name"], resource["spec"]["template"]["spec"]))
    return specs


def _containers() -> list[tuple[str, dict]]:
    return [
        (f"{name}/{container['name']}", container)
        for name, spec in _pod_specs() for container in spec.get("initContainers", []) + spec["containers"]
    ]


@pytest.mark.parametrize("name,resource", _resources(), ids=lambda value: value if isinstance(value, str) else "")
def test_every_manifest_is_valid_kubernetes(name: str, resource: dict) -> None:
    try:
        kubernetes_validate.validate(resource, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        where = ".".join(map(str, exc.path))
        pytest.fail(f"{name}: {resource['kind']}/{resource['metadata']['name']}: {where}: {exc.message}")


def test_the_kustomization_lists_every_manifest_but_the_secret_example() -> None:
    kustomization = _documents(MANIFESTS / "kustomization.yaml")[0]
    listed = set(kustomization["resources"])
    present = {path.name for path in MANIFESTS.glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == present - {"secret.example.yaml"}, (listed, present)
    assert [image["name"] for image in kustomization["images"]] == [IMAGE]
    # The Secret is the operator's: nothing in the applied set carries one.
    assert all(resource["kind"] != "Secret" for name, resource in _resources() if name in listed)


def _set_variables() -> dict[str, str]:
    """Every variable the manifests set: the ConfigMap's data, the example Secret's keys, containers' env."""
    found: dict[str, str] = {}
    for _, resource in _resources():
        if resource["kind"] == "ConfigMap":
            found |= resource["data"]
        elif resource["kind"] == "Secret":
            found |= resource["stringData"]
    for _, container in _containers():
        found |= {entry["name"]: entry.get("value", "") for entry in container.get("env", [])}
    return found


def test_every_variable_is_a_setting_and_the_config_is_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    variables = _set_variables()
    fields = {f"PASSK_{name.upper()}" for name in Settings.model_fields}
    passk = {name for name in variables if name.startswith("PASSK_")}
    assert passk - fields == set(), f"not settings: {passk - fields}"
    assert set(variables) - passk <= set(OTHER_VARIABLES), set(variables) - passk
    # The ConfigMap's values, with real secrets in place of the example's, make production Settings.
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PASSK_DATABASE_URL", f"postgresql+psycopg://passk:{secrets.token_hex(16)}@db:5432/passk")
    monkeypatch.setenv("PASSK_SECRET_KEY", secrets.token_hex(32))
    monkeypatch.setenv("PASSK_WEBHOOK_SECRET", secrets.token_hex(32))
    settings = Settings()
    assert settings.env == "production"
    # The example Secret names the three secrets passk reads, and every pod reads the Secret and the ConfigMap.
    example = _documents(MANIFESTS / "secret.example.yaml")[0]["stringData"]
    assert set(example) == {"PASSK_DATABASE_URL", "PASSK_SECRET_KEY", "PASSK_WEBHOOK_SECRET"}
    for name, container in _containers():
        if container["image"] == IMAGE:
            sources = {next(iter(ref.values()))["name"] for ref in container["envFrom"]}
            assert sources == {"passk-config", "passk-secrets"}, name


def test_commands_ports_probes_and_users_exist() -> None:
    subcommands = set(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    dockerfile = (REPO / "Dockerfile").read_text()
    image_user = re.search(r"^USER (\d+):(\d+)$", dockerfile, re.MULTILINE)
    assert image_user, "the Dockerfile names no numeric USER"
    seen = set()
    for name, container in _containers():
        if container["image"] != IMAGE:
            continue
        command = container["command"]
        words = command[2].split() if command[:2] == ["sh", "-c"] else command
        invoked = [words[i + 1] for i, word in enumerate(words[:-1]) if word == "passk"]
        assert invoked and set(invoked) <= subcommands, (name, command)
        seen |= set(invoked)
        if "--port" in command:
            port = int(command[command.index("--port") + 1])
            assert [p["containerPort"] for p in container["ports"]] == [port], name
            assert container["readinessProbe"]["httpGet"]["path"] == "/healthz", name
    assert seen == {"serve", "worker", "images", "migrate"}, seen
    for name, spec in _pod_specs():
        for container in spec["containers"]:
            if container["image"] == IMAGE:
                context = {**spec.get("securityContext", {}), **container.get("securityContext", {})}
                assert (str(context["runAsUser"]), str(context["runAsGroup"])) == image_user.groups(), name
                assert context.get("privileged") is not True and context["allowPrivilegeEscalation"] is False, name


def test_the_readiness_path_is_the_apis_health_route() -> None:
    from service.api.app import create_app

    app = create_app(Settings(env="test", database_url="postgresql+psycopg://u:p@h/d"))  # connects to nothing
    assert "get" in app.openapi()["paths"]["/healthz"]


def test_the_worker_reaches_the_engine_it_owns() -> None:
    """The worker's DOCKER_HOST is the sidecar engine's socket, on a volume they share, owned by the worker's group."""
    spec = dict(_pod_specs())["passk-worker"]
    engine = next(c for c in spec["initContainers"] if c["name"] == "engine")
    worker = next(c for c in spec["containers"] if c["name"] == "worker")
    assert engine["restartPolicy"] == "Always" and engine["securityContext"]["privileged"] is True
    host = next(arg.split("=", 1)[1] for arg in engine["args"] if arg.startswith("--host="))
    assert {"name": "DOCKER_HOST", "value": host} in worker["env"]
    socket_dir = str(Path(host.removeprefix("unix://")).parent)
    shared = {(m["name"], m["mountPath"]) for m in engine["volumeMounts"]} & {
        (m["name"], m["mountPath"]) for m in worker["volumeMounts"]
    }
    assert [path for _, path in shared] == [socket_dir], shared
    assert f"--group={worker['securityContext']['runAsGroup']}" in engine["args"]
    # The sandboxes' resources are the engine container's: at least a core and 552 MiB per parallel sandbox
    # requested, and 552 MiB per sandbox of either kind within the limit. The interactive sandboxes are set: their
    # default follows the cores the process sees, the node's.
    config = next(r for _, r in _resources() if r["kind"] == "ConfigMap")["data"]
    concurrency, interactive = int(config["PASSK_WORKER_CONCURRENCY"]), int(config["PASSK_INTERACTIVE_SANDBOXES"])
    requests, limits = engine["resources"]["requests"], engine["resources"]["limits"]
    assert float(requests["cpu"]) >= concurrency
    assert _mebibytes(requests["memory"]) >= concurrency * (512 + 40)
    assert _mebibytes(limits["memory"]) >= (concurrency + interactive) * (512 + 40)


def _mebibytes(quantity: str) -> float:
    units = {"Mi": 1, "Gi": 1024}
    return float(quantity[:-2]) * units[quantity[-2:]]
