"""deploy/: the bot's own Helm chart passes the bot's review, and the image and App manifest say
what the README promises.

The chart is reviewed the way a PR adding it would be: a repository whose second commit adds
`deploy/chart`, reviewed by the real CLI with every profile rendered by the embedded Helm."""

from __future__ import annotations

import io
import json
import re
import shutil
import tarfile
from typing import Any

import pytest
import yaml

from bot.cli.main import EXIT_OK, main
from bot.render.embedded import EmbeddedHelm
from tests.support.gitbuilder import GitBuilder
from tests.support.paths import ROOT

DEPLOY = ROOT / "deploy"
CHART = DEPLOY / "chart"
PROFILES = {"default", "redis", "openshift"}
RELEASE = "release"
WEB = "Deployment/default/release-chart-review-bot-web"
WORKER = "Deployment/default/release-chart-review-bot-worker"
REDIS = "Deployment/default/release-chart-review-bot-redis"
TEST_POD = "Pod/default/release-chart-review-bot-test-healthz"
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


def render(profile: str) -> list[dict[str, Any]]:
    """Every object the chart renders with ci/<profile>-values.yaml."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        tar.add(CHART, arcname="chart-review-bot")
    values = yaml.safe_load((CHART / "ci" / f"{profile}-values.yaml").read_text())
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
    url = "redis://release-chart-review-bot-redis:6379/0"
    assert env(web)["REDIS_URL"] == env(work)["REDIS_URL"] == url
    services = {d["metadata"]["name"] for d in docs if d["kind"] == "Service"}
    assert services == {"release-chart-review-bot", "release-chart-review-bot-redis"}


def test_openshift_pins_no_uid() -> None:
    docs = render("openshift")
    text = json.dumps(docs)
    assert "runAsUser" not in text
    pods = [deployment(docs, c)["spec"]["template"]["spec"] for c in ("web", "worker", "redis")]
    assert all(p["securityContext"]["runAsNonRoot"] is True for p in pods)


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
