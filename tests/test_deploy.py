"""The deployment files: the Kubernetes manifests (deploy/) validated
offline against the API's schemas and against the server they run, and the
Dockerfile's build steps run here as far as this machine allows (no image
registry is reachable, so no base image: its build stage is `pip install .`
of what it copies, which the last test does in a fresh virtualenv, then
serves from it and probes it the way the image's HEALTHCHECK does).

The kustomizations are rendered by `kubectl kustomize` (offline: no cluster);
without kubectl on the PATH those tests skip (in CI a skip is a failure: conftest.py)."""
from __future__ import annotations

import fnmatch
import functools
import json
import os
import re
import shlex
import shutil
import site
import subprocess
import sysconfig
import tomllib
import venv
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from cirulla.server.config import available_cores, parse_config, unknown_variables
from cirulla.server.stopping import OVERRUN_SECONDS

ROOT = Path(__file__).resolve().parent.parent
K8S = ROOT / "deploy" / "k8s"
EXAMPLE_OVERLAY = ROOT / "deploy" / "overlays" / "example"
OPERATIONS = ROOT / "docs" / "operations.md"
KUBERNETES_VERSION = "1.31.0"       # the oldest minor the manifests are held to (kubernetes-validate's schemas)
# the kinds the optional components add: custom resources, whose schemas come with their CRDs
GATEWAY_API = "gateway.networking.k8s.io/v1"
PROMETHEUS_OPERATOR = "monitoring.coreos.com/v1"
CUSTOM_KINDS = {("Gateway", GATEWAY_API), ("GRPCRoute", GATEWAY_API), ("ServiceMonitor", PROMETHEUS_OPERATOR)}


def by_kind(objects: Iterable[dict]) -> dict[str, dict]:
    """kind -> the one object of that kind."""
    found: dict[str, dict] = {}
    for doc in objects:
        assert doc["kind"] not in found, f"two {doc['kind']}s"
        found[doc["kind"]] = doc
    return found


def manifests() -> dict[str, dict]:
    """kind -> the one object of that kind in deploy/k8s/'s files."""
    return by_kind(doc for path in sorted(K8S.glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text()))


def run(args: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
    """Runs a command to its end; a failure shows the command and all it printed."""
    result = subprocess.run(args, capture_output=True, text=True, **options)
    assert result.returncode == 0, f"{shlex.join(args)} exited {result.returncode}:\n{result.stdout}{result.stderr}"
    return result


def container(objects: dict[str, dict]) -> dict:
    (only,) = objects["Deployment"]["spec"]["template"]["spec"]["containers"]
    return only


# --- Kubernetes -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", sorted(p.name for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml"))
def test_each_manifest_is_valid_for_the_kubernetes_api(path):
    for doc in yaml.safe_load_all((K8S / path).read_text()):
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as e:
            pytest.fail(f"{path}: {doc['kind']}: {e.message} at {'.'.join(map(str, e.path))}")


def kustomization(folder: Path) -> dict:
    return yaml.safe_load((folder / "kustomization.yaml").read_text())


@pytest.mark.parametrize("folder", [K8S, *sorted((ROOT / "deploy" / "components").iterdir())],
                         ids=lambda folder: str(folder.relative_to(ROOT)))
def test_kustomization_lists_every_manifest(folder):
    listed = kustomization(folder)["resources"]
    assert sorted(listed) == sorted(p.name for p in folder.glob("*.yaml") if p.name != "kustomization.yaml")


def test_the_manifests_agree_with_each_other():
    objects = manifests()
    assert set(objects) == {"Namespace", "Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler",
                            "Kustomization"}
    deployment = objects["Deployment"]
    pod = deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    selects = lambda selector: all(labels.get(k) == v for k, v in selector.items())   # noqa: E731
    assert selects(deployment["spec"]["selector"]["matchLabels"])
    assert selects(objects["Service"]["spec"]["selector"])
    assert selects(objects["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"])
    target = objects["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    # headless: DNS gives the clients every replica's address for round_robin
    assert objects["Service"]["spec"]["clusterIP"] == "None"
    ports = {p["name"]: p["containerPort"] for p in container(objects)["ports"]}
    assert {p["targetPort"] for p in objects["Service"]["spec"]["ports"]} <= set(ports)
    assert pod["metadata"]["annotations"]["prometheus.io/port"] == str(ports["metrics"])


def test_the_deployment_runs_the_server_with_flags_it_accepts():
    objects = manifests()
    c = container(objects)
    env = {e["name"]: e["value"] for e in c.get("env", []) if "value" in e}
    assert all(name.startswith("CIRULLA_") for name in env)
    named = {e["name"]: "" for e in c.get("env", [])}            # from a Secret too
    assert unknown_variables(named) == []                         # each names a setting
    config = parse_config(c["args"], env)           # exits (SystemExit) on a flag or variable it does not know
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert config.listen == f"0.0.0.0:{ports['grpc']}"
    assert config.metrics_listen == f"0.0.0.0:{ports['metrics']}"
    assert config.log_format == "json"
    assert config.max_connection_age_ms > 0       # clients re-resolve as replicas come and go
    # one search thread per CPU the container gets, not per CPU of the node
    assert config.max_concurrent_searches == int(c["resources"]["requests"]["cpu"])
    assert config.max_concurrent_searches == int(c["resources"]["limits"]["cpu"])
    # the native gRPC probes ask grpc.health.v1 on the serving port
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert c[probe]["grpc"]["port"] == ports["grpc"], probe
    # Kubernetes waits for the server's own shutdown before it kills the pod (the stop's deadline ends it)
    needed = config.grace_seconds + OVERRUN_SECONDS
    grace = objects["Deployment"]["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    assert grace >= needed + 1, f"terminationGracePeriodSeconds {grace} < {needed} s of the server's shutdown + 1"


def test_the_pod_runs_as_nobody_in_particular():
    objects = manifests()
    pod = objects["Deployment"]["spec"]["template"]["spec"]
    c = container(objects)
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    dockerfile_user = re.search(r"^USER (\d+)$", (ROOT / "Dockerfile").read_text(), re.M)
    assert dockerfile_user and int(dockerfile_user.group(1)) == pod["securityContext"]["runAsUser"]


# --- the kustomizations, rendered as kubectl applies them --------------------------------------------------

def kubectl() -> str:
    found = shutil.which("kubectl")
    if found is None:
        pytest.skip("kubectl is not on the PATH: it renders the kustomizations (1.21 or later; "
                    "install it as https://kubernetes.io/docs/tasks/tools/ says)")
    return found


@functools.cache
def rendered(folder: Path) -> tuple[dict, ...]:
    """The objects `kubectl kustomize FOLDER` renders: what `kubectl apply -k` would send."""
    return tuple(yaml.safe_load_all(run([kubectl(), "kustomize", str(folder)], timeout=120).stdout))


def operations() -> str:
    return OPERATIONS.read_text()


def test_the_offline_checks_the_docs_give_pass():
    """docs/operations.md's commands as an operator runs them: every object of a
    kind Kubernetes has is valid for its API, strictly; only the custom kinds go
    unchecked there, and only in the overlay (the base needs no CRD)."""
    checks = {folder: command for command, folder in re.findall(
        r"^\s*(kubectl kustomize (\S+) \| kubernetes-validate --strict -k \S+ -)$", operations(), re.M)}
    assert set(checks) == {"deploy/k8s", "deploy/overlays/example"}
    assert all(f" -k {KUBERNETES_VERSION} " in command for command in checks.values())
    kubectl()
    # this environment's kubernetes-validate, whether in a virtualenv or the machine's Python
    path = sysconfig.get_path("scripts") + os.pathsep + os.environ["PATH"]
    for folder, command in checks.items():
        printed = run(["bash", "-o", "pipefail", "-c", command], cwd=ROOT, env={**os.environ, "PATH": path},
                      timeout=120).stdout
        objects = rendered(ROOT / folder)
        custom = {(o["kind"], o["apiVersion"]) for o in objects} & CUSTOM_KINDS
        passed = set(re.findall(r"^INFO .* passed for resource (\S+) against", printed, re.M))
        assert passed == {f"{o['kind'].lower()}/{o['metadata']['name']}" for o in objects
                          if (o["kind"], o["apiVersion"]) not in custom}, printed
        unchecked = set(re.findall(r"^WARN .*schema for kind (\S+) with api version (\S+) ", printed, re.M))
        assert unchecked == custom == (CUSTOM_KINDS if folder == "deploy/overlays/example" else set()), printed


@pytest.mark.parametrize("folder", [K8S, EXAMPLE_OVERLAY], ids=["base", "example overlay"])
def test_every_object_goes_in_the_namespace_the_kustomization_makes(folder):
    objects = rendered(folder)
    (namespace,) = [o for o in objects if o["kind"] == "Namespace"]
    for o in objects:
        if o is not namespace:
            assert o["metadata"].get("namespace") == namespace["metadata"]["name"], o["kind"]
    assert kustomization(folder).get("namespace") == namespace["metadata"]["name"]


def test_the_image_the_docs_build_and_push_is_the_one_the_overlay_deploys():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert container(by_kind(rendered(K8S)))["image"] == f"cirulla-server:{version}"
    assert f"docker build -t cirulla-server:{version} ." in dockerfile()
    deployed = container(by_kind(rendered(EXAMPLE_OVERLAY)))["image"]
    assert deployed.endswith(f"/cirulla-server:{version}")
    docs = operations()
    for step in (r"docker build -t (\S+) \.", r"docker push (\S+)", r"kustomize edit set image cirulla-server=(\S+)"):
        found = re.search(rf"^\s*(?:.* && )?{step}$", docs, re.M)
        assert found and found.group(1) == deployed, step


def test_the_gateway_routes_grpc_to_the_server_with_tls_ended_by_the_documented_secret():
    """No Gateway API schema can be had offline: the fields the route and the
    listener point at are checked against what they point to."""
    objects = by_kind(rendered(EXAMPLE_OVERLAY))
    gateway, route, service = objects["Gateway"], objects["GRPCRoute"], objects["Service"]
    assert gateway["spec"]["gatewayClassName"]
    listeners = {listener["name"]: listener for listener in gateway["spec"]["listeners"]}
    documented_secret = re.search(r"kubectl create secret tls (\S+) ", operations())
    assert documented_secret
    for parent in route["spec"]["parentRefs"]:
        assert parent["name"] == gateway["metadata"]["name"]
        listener = listeners[parent["sectionName"]]
        assert {"kind": "GRPCRoute"} in listener["allowedRoutes"]["kinds"]
        assert listener["protocol"] == "HTTPS" and listener["tls"]["mode"] == "Terminate"
        (certificate,) = listener["tls"]["certificateRefs"]
        assert certificate.get("kind", "Secret") == "Secret"
        assert certificate["name"] == documented_secret.group(1)
        # the host name the overlay sets, and the route takes
        assert listener["hostname"] and route["spec"].get("hostnames", [listener["hostname"]]) == [listener["hostname"]]
    ports = {port["port"]: port for port in service["spec"]["ports"]}
    backends = [backend for rule in route["spec"]["rules"] for backend in rule["backendRefs"]]
    assert backends
    for backend in backends:
        assert backend.get("kind", "Service") == "Service" and backend["name"] == service["metadata"]["name"]
        # the gRPC port, which the gateway reaches as cleartext HTTP/2
        assert ports[backend["port"]]["name"] == "grpc"
        assert ports[backend["port"]]["appProtocol"] == "kubernetes.io/h2c"


def test_the_service_monitor_scrapes_each_replica_where_the_annotations_say():
    objects = by_kind(rendered(EXAMPLE_OVERLAY))
    monitor, service = objects["ServiceMonitor"], objects["Service"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    annotations = objects["Deployment"]["spec"]["template"]["metadata"]["annotations"]
    service_ports = {port["name"]: port for port in service["spec"]["ports"]}
    container_ports = {port["name"]: port["containerPort"] for port in container(objects)["ports"]}
    (endpoint,) = monitor["spec"]["endpoints"]
    scraped = container_ports[service_ports[endpoint["port"]]["targetPort"]]
    assert scraped == int(annotations["prometheus.io/port"])
    assert endpoint["path"] == annotations["prometheus.io/path"]


# --- the Dockerfile ------------------------------------------------------------------------------------

def dockerfile() -> str:
    return (ROOT / "Dockerfile").read_text()


def copied() -> list[str]:
    """What the build stage copies from the build context."""
    sources = []
    for line in dockerfile().splitlines():
        if line.startswith("COPY ") and "--from=" not in line:
            sources += line.split()[1:-1]
    return sources


def ignored(name: str) -> bool:
    """Whether .dockerignore keeps a file out of a copied folder (its **/ patterns)."""
    patterns = [p.removeprefix("**/") for p in (ROOT / ".dockerignore").read_text().split()
                if p.startswith("**/")]
    return any(fnmatch.fnmatch(name, p) for p in patterns)


def test_the_image_gets_every_package_folder_and_what_the_build_reads():
    packages = {v.strip('"') for v in re.findall(r'= "([^"]+)"', (ROOT / "pyproject.toml").read_text().split(
        "[tool.setuptools.package-dir]")[1].split("\n[")[0])}
    tops = {p.split("/")[0] + "/" for p in packages}
    assert tops <= set(copied()), f"the Dockerfile does not copy {tops - set(copied())}"
    for needed in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        assert needed in copied()
    reincluded = {p.removeprefix("!") for p in (ROOT / ".dockerignore").read_text().split() if p.startswith("!")}
    assert reincluded == set(copied()), "the Dockerfile's COPY lines and .dockerignore's ! lines must agree"


def test_the_image_runs_the_server_and_probes_it_as_documented():
    text = dockerfile()
    assert re.search(r'^ENTRYPOINT \["cirulla-server", "--listen", "0\.0\.0\.0:50051"\]$', text, re.M)
    assert re.search(r"^RUN python -m venv /opt/cirulla && /opt/cirulla/bin/pip install --no-cache-dir \.$", text,
                     re.M), "the build stage is the README's install"
    health = re.search(r"^\s+CMD (\[.*\])$", text, re.M)
    assert health and json.loads(health.group(1))[:3] == ["python", "-m", "cirulla.server.probe"]


def test_the_test_extra_has_what_the_build_needs():
    """The next test builds the project with no index, from this environment:
    the build's requirements must come with the test extra."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert set(pyproject["build-system"]["requires"]) <= set(pyproject["project"]["optional-dependencies"]["test"])


def test_the_image_build_steps_install_a_working_server(tmp_path):
    """The build stage on this machine: the copied files (less .dockerignore's)
    into an empty context, `pip install .` there into a fresh virtualenv (pip,
    the build's requirements and the project's dependencies taken from this
    environment: no network), then `cirulla-server` from that virtualenv,
    probed as the HEALTHCHECK does."""
    context = tmp_path / "context"
    context.mkdir()
    for source in copied():
        src = ROOT / source
        if src.is_dir():
            shutil.copytree(src, context / source, ignore=lambda _, names: [n for n in names if ignored(n)])
        else:
            shutil.copy2(src, context / source)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    # This environment's packages after the new one's own. (system_site_packages would give the base
    # interpreter's, not this virtualenv's; a path in a .pth file is added without running its .pth
    # files, so this checkout's editable install stays out.)
    own = run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip()
    here = site.getsitepackages() + ([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])
    Path(own, "this-environment.pth").write_text("\n".join(here) + "\n")
    run([str(python), "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", "-q", str(context)],
        cwd=tmp_path)
    where = run([str(python), "-c", "import cirulla.server.app as m, cirulla.solver._core as c, "
                 "cirulla.v1.game_pb2 as g; print(m.__file__, c.__file__, g.__file__)"], cwd=tmp_path).stdout.split()
    assert all(path.startswith(str(env_dir)) for path in where), where       # not this checkout's
    server = subprocess.Popen([str(env_dir / "bin" / "cirulla-server"), "--listen", "127.0.0.1:0"],
                              stderr=subprocess.PIPE, text=True, cwd=tmp_path, env={**os.environ})
    try:
        port = None
        for line in server.stderr:
            found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if found:
                port = found.group(1)
                break
        assert port, "the installed server did not start"
        probe = subprocess.run([str(python), "-m", "cirulla.server.probe", f"127.0.0.1:{port}"],
                               capture_output=True, text=True, timeout=30, cwd=tmp_path)
        assert (probe.returncode, probe.stdout.strip()) == (0, f"127.0.0.1:{port}: SERVING"), probe.stderr
    finally:
        server.terminate()
        server.wait(30)
    assert server.returncode == 0
    stopped = subprocess.run([str(python), "-m", "cirulla.server.probe", f"127.0.0.1:{port}", "--timeout", "1"],
                             capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert stopped.returncode == 1 and "UNAVAILABLE" in stopped.stderr, shlex.join(stopped.args)


@pytest.mark.parametrize("cpu_max, expected", [("max 100000", None), ("100000 100000", 1), ("150000 100000", 1),
                                                ("50000 100000", 1), ("not a quota", None), (None, None)])
def test_a_container_cpu_limit_sets_the_search_slots(tmp_path, cpu_max, expected):
    """Containers see every CPU of the node; a search thread per node CPU under
    a limit of 1.5 CPUs would be throttled. (None: the CPUs it may run on.)"""
    path = tmp_path / "cpu.max"
    if cpu_max is not None:
        path.write_text(cpu_max + "\n")
    allowed = len(os.sched_getaffinity(0))
    assert available_cores(path) == (allowed if expected is None else min(expected, allowed))
    if allowed >= 2:
        assert available_cores(_cpu_max(tmp_path, "200000 100000")) == 2
        assert available_cores(_cpu_max(tmp_path, "250000 100000")) == 2


def _cpu_max(folder: Path, text: str) -> Path:
    path = folder / "two.max"
    path.write_text(text)
    return path
