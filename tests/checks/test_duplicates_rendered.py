"""The duplicates check by what PRs render: the same object changed the same way on a profile, by
different text, found with the other PRs' heads rendered by the real engine."""

from __future__ import annotations

import io
import tarfile
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from bot.charts.other_renders import MAX_OTHER_PRS
from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.kube.capabilities import DEFAULT_CAPABILITIES, Capabilities
from bot.model.context import OpenPR
from bot.model.report import Finding, Severity
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from checks import REGISTRY
from tests.support.gitbuilder import GitBuilder

TEMPLATE = "app/templates/deployment.yaml"
VALUES = "app/values.yaml"
CHART = "apiVersion: v2\nname: app\nversion: 1.0.0\nappVersion: '1.0'\n"
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-api
  labels:
    helm.sh/chart: app-{{ .Chart.Version }}
spec:
  replicas: %(replicas)s
  selector:
    matchLabels:
      app: api
  template:
    metadata:
      labels:
        app: api
    spec:
      containers:
        - name: api
          image: example/api:{{ .Chart.AppVersion }}
%(extra)s"""
FROM_VALUES = "{{ .Values.replicas }}"
DEPLOYMENT_KEY = "Deployment/default/release-api"


def deployment(replicas: str = FROM_VALUES, extra: str = "") -> str:
    return DEPLOYMENT % {"replicas": replicas, "extra": extra}


class CountingHelm:
    """The embedded renderer, noting which chart each render was asked for."""

    def __init__(self) -> None:
        self.helm = EmbeddedHelm()
        self.version = self.helm.version
        self.charts: list[str] = []
        self.values: list[Mapping[str, Any]] = []

    def render(
        self,
        archive: bytes,
        values: Mapping[str, Any],
        release: str,
        namespace: str,
        capabilities: Capabilities = DEFAULT_CAPABILITIES,
    ) -> dict[str, str]:
        self.charts.append(chart_name(archive))
        self.values.append(values)
        return self.helm.render(archive, values, release, namespace, capabilities)


def chart_name(archive: bytes) -> str:
    """The `name:` of the archive's top Chart.yaml."""
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        top = next(
            m for m in tar.getmembers() if m.name.count("/") == 1 and m.name.endswith("/Chart.yaml")
        )
        text = tar.extractfile(top).read().decode()  # type: ignore[union-attr]
    return next(
        line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("name:")
    )


@pytest.fixture
def g(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    g.write("app/Chart.yaml", CHART).write(VALUES, "replicas: 1\n").write(TEMPLATE, deployment())
    g.write("other/Chart.yaml", CHART.replace("app", "other")).write("other/values.yaml", "x: 1\n")
    g.write("other/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: o\n")
    return g.commit("app 1.0.0")


def branch(g: GitBuilder, name: str, files: dict[str, str]) -> str:
    g.branch(name, "develop")
    for path, text in files.items():
        g.write(path, text)
    g.commit(f"{name}: change").checkout("develop")
    return g.sha(name)


def review(
    g: GitBuilder, others: Sequence[OpenPR], renderer: CountingHelm | None = None
) -> list[Finding]:
    engine = Engine(GitRepo(g.path), renderer or CountingHelm(), REGISTRY, RenderCache())
    inp = ReviewInput(
        base="develop", head="mine", open_prs=tuple(others), only_checks=("duplicates",)
    )
    return engine.review(inp).report.findings_for("duplicates")


def test_the_same_deployment_change_by_values_and_by_template_is_a_duplicate(g: GitBuilder) -> None:
    branch(g, "mine", {VALUES: "replicas: 3\n"})
    other = branch(g, "theirs", {TEMPLATE: deployment(replicas="3")})
    (found,) = review(g, [OpenPR(3, other, "theirs", title="Three replicas")])
    assert (found.severity, found.rule, found.chart, found.path, found.line) == (
        Severity.WARNING,
        "same-change",
        "app",
        TEMPLATE,
        None,
    )
    assert (
        found.title
        == f"#3 “Three replicas” makes the same rendered change to {DEPLOYMENT_KEY} (profile default)"
    )
    assert found.message.startswith(
        f"#3 “Three replicas” renders the same change to {DEPLOYMENT_KEY} (profile default)."
    )
    assert found.data["shared"] == ["objects"]
    assert found.data["hunks"] == []
    assert found.data["objects"] == [
        {"chart": "app", "object": DEPLOYMENT_KEY, "profiles": ["default"]}
    ]


def test_the_same_object_changed_differently_is_no_duplicate(g: GitBuilder) -> None:
    branch(g, "mine", {VALUES: "replicas: 3\n"})
    other = branch(g, "theirs", {TEMPLATE: deployment(replicas="5")})
    assert review(g, [OpenPR(3, other, "theirs")]) == []


def test_the_same_version_bump_rendered_into_an_image_is_no_duplicate(g: GitBuilder) -> None:
    """The version check's race: both take appVersion 2.0, which only the image tag and the
    chart label show."""
    bumped = CHART.replace("1.0.0", "1.1.0").replace("'1.0'", "'2.0'")
    branch(g, "mine", {"app/Chart.yaml": bumped})
    other = branch(
        g, "theirs", {"app/Chart.yaml": bumped.replace("version: 1.1.0", "version: 1.1.0 ")}
    )
    assert review(g, [OpenPR(3, other, "theirs")]) == []


def test_a_shared_hunk_rendering_differently_is_only_a_notice(g: GitBuilder) -> None:
    probe = "          readinessProbe: {tcpSocket: {port: 8080}}\n"
    branch(g, "mine", {TEMPLATE: deployment(extra=probe), VALUES: "replicas: 2\n"})
    other = branch(g, "theirs", {TEMPLATE: deployment(extra=probe), VALUES: "replicas: 4\n"})
    (found,) = review(g, [OpenPR(3, other, "theirs")])
    assert (found.severity, found.rule, found.data["shared"]) == (
        Severity.NOTICE,
        "same-change",
        ["hunks"],
    )
    assert found.data["renders_differ"] is True
    assert "What the two render differs, though" in found.message


def test_a_pr_touching_another_chart_is_never_rendered(g: GitBuilder) -> None:
    branch(g, "mine", {VALUES: "replicas: 3\n"})
    other = branch(g, "theirs", {"other/values.yaml": "x: 2\n"})
    helm = CountingHelm()
    assert review(g, [OpenPR(3, other, "theirs")], helm) == []
    assert sorted(helm.charts) == ["app", "app"]  # this PR's base and head, nothing of `other`


def test_at_most_the_cap_of_prs_is_rendered_lowest_numbered_first(g: GitBuilder) -> None:
    branch(g, "mine", {VALUES: "replicas: 3\n"})
    numbers = [16, 11, 14, 10, 15, 12, 13]
    others = [
        # Each its own chart tree (a comment renders nothing), so each is a render of its own.
        OpenPR(n, branch(g, f"pr{n}", {TEMPLATE: f"# variant {n}\n" + deployment(replicas="3")}))
        for n in numbers
    ]
    helm = CountingHelm()
    found = review(g, others, helm)
    assert MAX_OTHER_PRS == 5
    assert [f.data["pr"] for f in found] == [10, 11, 12, 13, 14]
    assert len(helm.charts) == 2 + MAX_OTHER_PRS  # this PR's base and head, then five heads


def test_a_profile_s_values_file_is_rendered_on_that_profile_only(g: GitBuilder) -> None:
    g.write("app/ci/a-values.yaml", "replicas: 1\n").write("app/ci/b-values.yaml", "replicas: 1\n")
    g.commit("two profiles")
    branch(g, "mine", {"app/ci/a-values.yaml": "replicas: 3\n"})
    same = branch(g, "same", {"app/ci/a-values.yaml": "replicas: 3\nunread: true\n"})
    elsewhere = branch(g, "elsewhere", {"app/ci/b-values.yaml": "replicas: 3\nfrom_b: true\n"})
    helm = CountingHelm()
    found = review(g, [OpenPR(3, same, "same"), OpenPR(4, elsewhere, "elsewhere")], helm)
    assert [(f.data["pr"], f.data["objects"]) for f in found] == [
        (3, [{"chart": "app", "object": DEPLOYMENT_KEY, "profiles": ["a"]}])
    ]
    # #3 is rendered on profile a; #4 reaches only b, which this PR leaves alone: never rendered,
    # neither on b nor with a's unchanged values (the values of both profiles' base renders alone;
    # this PR's head on b is the base's render, from the cache).
    assert sum(1 for v in helm.values if v.get("unread")) == 1
    assert not any(v.get("from_b") for v in helm.values)
    assert [v for v in helm.values if v == {"replicas": 1}] == [{"replicas": 1}] * 2


def test_objects_alike_outside_noise_are_told_without_copies() -> None:
    """The cheap test before the diff: labels, annotations and ignored fields do not count,
    anything else does, however deep, and the keys compare as text (as the diff reads them)."""
    from bot.model.diff_noise import fields_pattern
    from checks.duplicates.objects import _alike_outside_noise as alike

    ignored = fields_pattern(("status", "*Timestamp"))
    base = {
        "kind": "Deployment",
        "metadata": {"name": "a", "labels": {"x": "1"}, "creationTimestamp": None},
        "spec": {"template": {"metadata": {"annotations": {"c": "1"}}, "spec": {"n": [1, {2: 3}]}}},
        "status": {"ready": 1},
    }
    relabelled = {
        **base,
        "metadata": {"name": "a", "labels": {"x": "2"}},
        "spec": {"template": {"metadata": {}, "spec": {"n": (1, {"2": 3})}}},
        "status": {"ready": 2},
    }
    assert alike(base, relabelled, ignored)
    deeper = {**base, "spec": {"template": {"metadata": {}, "spec": {"n": [1, {2: 4}]}}}}
    assert not alike(base, deeper, ignored)
    assert not alike(base, {**base, "spec": {"template": {}}}, ignored)
    assert not alike(base, {**base, "extra": 1}, ignored)
    assert not alike({"a": [1]}, {"a": [1, 1]}, None) and not alike({"a": {}}, {"a": []}, None)
    assert not alike(base, relabelled, None)  # status counts where no field is ignored


SERVICE = "app/templates/service.yaml"
SERVICE_TEXT = """\
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-api
spec:
  ports:
    - port: 80
"""


def test_the_same_object_added_from_another_template_file_is_a_duplicate(g: GitBuilder) -> None:
    """Of another head only the templates holding this PR's changed objects are read first; an
    object it renders from another file is found all the same (its render is read whole)."""
    branch(g, "mine", {SERVICE: SERVICE_TEXT})
    other = branch(g, "theirs", {"app/templates/svc.yaml": SERVICE_TEXT})
    (found,) = review(g, [OpenPR(3, other, "theirs", title="A service")])
    assert found.rule == "same-change"
    assert found.data["objects"] == [
        {"chart": "app", "object": "Service/default/release-api", "profiles": ["default"]}
    ]


def test_another_head_s_templates_are_parsed_only_where_this_pr_changed_objects(
    g: GitBuilder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.model import manifests

    branch(g, "mine", {VALUES: "replicas: 3\n"})
    noise = {
        f"app/templates/noise{n}.yaml": f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{n}\n"
        for n in range(3)
    }
    other = branch(g, "theirs", {TEMPLATE: deployment(replicas="3"), **noise})
    parsed: list[str] = []
    load = manifests.load_documents

    def counting(text: str, template: str) -> tuple[Any, ...]:
        parsed.append(template)
        return load(text, template)

    monkeypatch.setattr(manifests, "load_documents", counting)
    (found,) = review(g, [OpenPR(3, other, "theirs", title="Three replicas")])
    assert found.rule == "same-change"
    assert TEMPLATE in parsed
    assert not any("noise" in t for t in parsed)  # only theirs, holding nothing this PR changed


def test_open_prs_still_being_found_are_waited_for_where_the_review_reads_them(
    g: GitBuilder,
) -> None:
    """The command line finds the open PRs while the charts render (ReviewInput.open_prs_found):
    the review is the one it makes with them given, and waits for them however late they come."""
    branch(g, "mine", {VALUES: "replicas: 3\n"})
    other = branch(g, "theirs", {TEMPLATE: deployment(replicas="3")})
    given = review(g, [OpenPR(3, other, "theirs", title="Three replicas")])
    release = threading.Event()
    with ThreadPoolExecutor(1) as pool:

        def found() -> tuple[OpenPR, ...]:
            release.wait(30)
            return (OpenPR(3, other, "theirs", title="Three replicas"),)

        later = pool.submit(found)
        engine = Engine(GitRepo(g.path), CountingHelm(), REGISTRY, RenderCache())
        inp = ReviewInput(
            base="develop", head="mine", open_prs_found=later, only_checks=("duplicates",)
        )
        threading.Timer(0.5, release.set).start()  # found, most likely, once the renders began
        result = engine.review(inp)
    assert result.report.findings_for("duplicates") == given
    assert [pr.number for pr in result.context.open_prs] == [3]


LABELLED = deployment(extra="").replace(
    "      labels:\n        app: api\n    spec:",
    "      labels:\n        app: api\n        {{- with .Values.owner }}\n        owner: {{ . }}\n"
    "        {{- end }}\n    spec:",
)


def test_a_pr_whose_text_cannot_render_this_change_is_compared_without_a_render(
    g: GitBuilder,
) -> None:
    """This PR types a label no file of the chart held; another PR's changed files never name it,
    so its render cannot hold this PR's change: it is not rendered. One whose values do is, and
    is found, the template's change and the values' alike (bot/charts/duplicate_evidence.py)."""
    g.write(TEMPLATE, LABELLED).commit("an owner label from values")
    branch(
        g,
        "mine",
        {
            TEMPLATE: LABELLED.replace(
                "app: api\n        {{- with", "app: api\n        team: zebra-crew\n        {{- with"
            )
        },
    )
    bumps = branch(g, "bumps", {VALUES: "replicas: 1\nimage: {tag: '2.0'}\n"})
    same = branch(g, "same", {VALUES: "replicas: 1\nowner: nobody\nteam: zebra-crew\n"})
    helm = CountingHelm()
    found = review(g, [OpenPR(3, bumps, "bumps"), OpenPR(4, same, "same")], helm)
    assert found == []  # #4 names the label's text but renders no such label
    assert len(helm.charts) == 3  # this PR's base and head, and #4's head: #3 is not rendered


def test_the_values_edit_rendering_this_pr_s_typed_label_is_still_a_duplicate(
    g: GitBuilder,
) -> None:
    """The case the rendered comparison exists for, with text this PR typed: the template gains
    the label, the other PR's values set it. The evidence lets its render through."""
    g.write(TEMPLATE, LABELLED).commit("an owner label from values")
    typed = LABELLED.replace(
        "{{- with .Values.owner }}\n        owner: {{ . }}",
        "owner: zebra-crew\n        {{- with .Values.nothing }}\n        none: {{ . }}",
    )
    branch(g, "mine", {TEMPLATE: typed})
    other = branch(g, "theirs", {VALUES: "replicas: 1\nowner: zebra-crew\n"})
    (found,) = review(g, [OpenPR(3, other, "theirs", title="Zebra owns it")])
    assert (found.severity, found.rule, found.data["shared"]) == (
        Severity.WARNING,
        "same-change",
        ["objects"],
    )
    assert found.data["objects"] == [
        {"chart": "app", "object": DEPLOYMENT_KEY, "profiles": ["default"]}
    ]


def test_another_pr_is_rendered_only_on_the_profiles_whose_change_it_could_make(
    g: GitBuilder,
) -> None:
    """This PR changes profile a by a label value it types, profile b by a number: a PR editing
    the defaults reaches both, but only b's change can be its own, so it is rendered on b alone."""
    g.write(TEMPLATE, LABELLED)
    g.write("app/ci/a-values.yaml", "profile: a\n").write("app/ci/b-values.yaml", "profile: b\n")
    g.commit("two profiles, an owner label from values")
    branch(
        g,
        "mine",
        {
            "app/ci/a-values.yaml": "profile: a\nowner: zebra-crew\n",
            "app/ci/b-values.yaml": "profile: b\nreplicas: 3\n",
        },
    )
    other = branch(g, "theirs", {VALUES: "replicas: 3\n"})
    helm = CountingHelm()
    (found,) = review(g, [OpenPR(3, other, "theirs")], helm)
    assert found.data["objects"] == [{"chart": "app", "object": DEPLOYMENT_KEY, "profiles": ["b"]}]
    # The base's a and b, this PR's a and b, and theirs on b alone.
    renders = [{"profile": "a"}, {"profile": "b"}, {"profile": "b"}]
    renders += [{"profile": "a", "owner": "zebra-crew"}, {"profile": "b", "replicas": 3}]
    assert sorted(map(str, helm.values)) == sorted(map(str, renders))
