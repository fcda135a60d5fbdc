"""The rendered diff on real git repositories and real Helm renders: per profile and object, with
what every release changes left out."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model.config import DiffConfig
from bot.model.context import ChartRenders, Rendered
from bot.model.manifests import Document
from bot.model.rendered_diff import CHANGED, UNCHANGED, chart_diff, rendered_diffs
from bot.model.report import Report
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from bot.report.diff_section import diff_markdown, diff_plain, fenced
from bot.report.markdown import to_markdown
from checks import REGISTRY
from tests.support.gitbuilder import GitBuilder

CHART = """apiVersion: v2
name: web
version: {version}
appVersion: "{version}"
"""
# Labels and an annotation that change on every release, beside what the values say.
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  labels:
    app: web
    helm.sh/chart: web-{{ .Chart.Version }}
    app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels:
        app: web
        helm.sh/chart: web-{{ .Chart.Version }}
      annotations:
        checksum/token: {{ .Values.token | sha256sum }}
    spec:
      containers:
        - name: web
          image: example/web:1
"""
SERVICE = """apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-web
spec:
  selector: {app: web}
  ports: [{port: 80}]
"""
PROFILES = {"aks": "{}\n", "bm": "replicas: 3\n", "eks": "{}\n"}


def write_chart(g: GitBuilder, version: str = "1.0.0", replicas: int = 1, token: str = "a") -> None:
    g.write("web/Chart.yaml", CHART.format(version=version))
    g.write("web/values.yaml", f"replicas: {replicas}\ntoken: {token}\n")
    g.write("web/templates/deployment.yaml", DEPLOYMENT)
    g.write("web/templates/service.yaml", SERVICE)
    for name, text in PROFILES.items():
        g.write(f"web/ci/{name}-values.yaml", text)


@pytest.fixture
def repo(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    write_chart(g)
    return g.commit("web 1.0.0")


def review(g: GitBuilder) -> Report:
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache())
    return engine.review(ReviewInput(base="develop", head="pr")).report


REPLICAS_DIFF = """--- a/Deployment/default/release-web
+++ b/Deployment/default/release-web
@@
     app: web
   name: release-web
 spec:
-  replicas: 1
+  replicas: 2
   selector:
     matchLabels:
       app: web
"""


def test_a_change_to_one_object_on_two_of_three_profiles(repo: GitBuilder) -> None:
    """The default goes from 1 to 2 replicas; `bm` sets its own 3, so its render does not change.
    The chart's version bump and its labels are noise, left out."""
    write_chart(repo.branch("pr"), version="1.0.1", replicas=2)
    report = review(repo.commit("two replicas"))
    (summary,) = report.charts
    diff = chart_diff(summary.path, summary.extra)
    assert diff is not None
    assert [(p.profile, p.status, [o.key for o in p.objects]) for p in diff.profiles] == [
        ("aks", CHANGED, ["Deployment/default/release-web"]),
        ("bm", UNCHANGED, []),
        ("eks", CHANGED, ["Deployment/default/release-web"]),
    ]
    assert diff.profiles[0].text == diff.profiles[2].text == REPLICAS_DIFF
    assert diff_markdown(report) == (
        "### Rendered diff\n\n"
        "**`web`**: 2 of 3 profiles changed\n\n"
        "<details><summary>1 object changed</summary>\n\n"
        "`aks`, `eks`: same diff\n\n"
        f"```diff\n{REPLICAS_DIFF}```\n\n"
        "`bm`: no change\n\n"
        "</details>"
    )
    assert diff_plain(report) == (
        f"# web: aks, eks: same diff\n{REPLICAS_DIFF}# web: bm: no change\n"
    )
    # The report for people ends with it; the JSON report holds it whole.
    assert to_markdown(report, REGISTRY.sections()).endswith(diff_markdown(report) + "\n")
    assert report.to_json()["charts"][0]["diff"]["profiles"][1] == {
        "profile": "bm",
        "status": "unchanged",
        "objects": [],
        "note": "",
    }


def test_noise_only_changes_show_nothing(repo: GitBuilder) -> None:
    """A version bump (`helm.sh/chart`, `app.kubernetes.io/version`) and a value that only feeds a
    `checksum/*` annotation: every object differs, and no line of it is worth reading."""
    write_chart(repo.branch("pr"), version="1.1.0", token="b")
    report = review(repo.commit("bump"))
    (summary,) = report.charts
    diff = chart_diff(summary.path, summary.extra)
    assert diff is not None and [p.status for p in diff.profiles] == [UNCHANGED] * 3
    assert diff_markdown(report) == (
        "### Rendered diff\n\n**`web`**: no change in the rendered manifests"
    )
    assert diff_plain(report) == "# web: no change in the rendered manifests\n"
    assert "```diff" not in to_markdown(report, REGISTRY.sections())


def test_a_chart_that_rendered_on_no_profile_is_not_compared_not_unchanged(
    repo: GitBuilder,
) -> None:
    """Issue 38: a chart that rendered on no profile read "no change in the rendered manifests"."""
    repo.branch("pr").write("web/templates/broken.yaml", "x: {{ .Values.a.b }}\n").commit("break")
    report = review(repo)
    markdown = diff_markdown(report)
    assert "no change in the rendered manifests" not in markdown
    assert markdown.startswith(
        "### Rendered diff\n\n**`web`**: not compared on any profile\n\n"
        "`aks`, `bm`, `eks`: not compared, it did not render at head"
    )
    assert diff_plain(report).startswith(
        "# web: not compared on any profile\n# web: aks, bm, eks: not compared, it did not render"
    )


def test_the_noise_is_configurable(repo: GitBuilder) -> None:
    """A repository that wants the chart label back empties `ignore_labels`; the other defaults
    stay."""
    repo.write(".github/chart-review.yml", "diff:\n  ignore_labels: [app.kubernetes.io/*]\n")
    repo.commit("config")
    write_chart(repo.branch("pr"), version="1.1.0", token="b")
    report = review(repo.commit("bump"))
    (summary,) = report.charts
    diff = chart_diff(summary.path, summary.extra)
    assert diff is not None
    text = diff.profiles[0].text
    assert "-    helm.sh/chart: web-1.0.0\n+    helm.sh/chart: web-1.1.0\n" in text
    assert "checksum/token" not in text and "app.kubernetes.io/version" not in text


def doc(kind: str, name: str, body: dict[str, object]) -> Document:
    meta = {"name": name, "namespace": "default"}
    return Document(
        kind, name, "default", "web/templates/x.yaml", {"kind": kind, "metadata": meta, **body}
    )


def renders(base: tuple[Document, ...], head: tuple[Document, ...]) -> ChartRenders:
    return ChartRenders(
        path="web",
        name="web",
        base={"default": Rendered("default", base)},
        head={"default": Rendered("default", head)},
    )


def test_secret_values_and_generated_certificates_are_never_shown() -> None:
    """`randAlphaNum` and `genCA` give new values at every render: a Secret shows only its keys, a
    webhook's `caBundle` only that it is there."""
    old = (
        doc("Secret", "s", {"data": {"password": "c2VjcmV0MQ=="}}),
        doc(
            "MutatingWebhookConfiguration",
            "m",
            {"webhooks": [{"clientConfig": {"caBundle": "QUJD"}}]},
        ),
    )
    new = (
        doc("Secret", "s", {"data": {"password": "b3RoZXI=", "token": "dA=="}}),
        doc(
            "MutatingWebhookConfiguration",
            "m",
            {"webhooks": [{"clientConfig": {"caBundle": "WFla"}}]},
        ),
    )
    data = rendered_diffs(renders(old, new), DiffConfig())
    diff = chart_diff("web", data)
    assert diff is not None
    (profile,) = diff.profiles
    assert [o.key for o in profile.objects] == ["Secret/default/s"]
    assert profile.text == (
        "--- a/Secret/default/s\n+++ b/Secret/default/s\n@@\n"
        " data:\n   password: <redacted>\n+  token: <redacted>\n kind: Secret\n metadata:\n"
        "   name: s\n"
    )


def test_values_python_calls_equal_still_differ_when_the_yaml_does() -> None:
    """`1`, `1.0` and `true` compare equal in Python; in the manifest they are three values."""
    old = (doc("ConfigMap", "c", {"data": {"a": 1, "b": 1, "c": 0}}),)
    new = (doc("ConfigMap", "c", {"data": {"a": True, "b": 1.0, "c": 0}}),)
    diff = chart_diff("web", rendered_diffs(renders(old, new), DiffConfig()))
    assert diff is not None
    (profile,) = diff.profiles
    assert profile.status == CHANGED
    assert "-  a: 1\n-  b: 1\n+  a: true\n+  b: 1.0\n   c: 0\n" in profile.text


def test_objects_equal_but_for_the_order_of_their_keys_are_unchanged() -> None:
    old = (doc("ConfigMap", "c", {"data": {"a": "1", "b": "2"}}),)
    new = (doc("ConfigMap", "c", {"data": {"b": "2", "a": "1"}}),)
    diff = chart_diff("web", rendered_diffs(renders(old, new), DiffConfig()))
    assert diff is not None
    assert diff.profiles[0].status == UNCHANGED


def test_an_object_the_pr_adds_is_diffed_against_nothing() -> None:
    script = doc("ConfigMap", "c", {"data": {"run.sh": "set -e\necho hi\n"}})
    diff = chart_diff("web", rendered_diffs(renders((), (script,)), DiffConfig()))
    assert diff is not None
    assert diff.profiles[0].text == (
        "--- /dev/null\n+++ b/ConfigMap/default/c\n@@\n"
        "+data:\n+  run.sh: |\n+    set -e\n+    echo hi\n+kind: ConfigMap\n"
        "+metadata:\n+  name: c\n+  namespace: default\n"
    )


def test_a_fence_outlasts_the_backticks_and_shows_hidden_characters() -> None:
    assert fenced("+ a: ````x\u202e") == "`````diff\n+ a: ````x\\u202e\n`````"
    assert fenced("+ a: 1") == "```diff\n+ a: 1\n```"


def test_the_dump_is_the_safe_dumpers_to_the_character() -> None:
    # The diff builds the representer's nodes itself (a third of its cost): every type parsed YAML
    # holds, and the strings that read back as something else unless quoted.
    import datetime

    import yaml

    from bot.model.yaml.dump import WIDE, dump_lines

    class Plain(yaml.CSafeDumper):  # the representer and resolver as PyYAML has them
        def ignore_aliases(self, data: object) -> bool:
            return True

    def block(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Plain.add_representer(str, block)

    body = {
        "b": ["true", "yes", "null", "~", "", "8080", "0x1F", "1e3", "-.inf", ".nan", "12:30"],
        "a": {"nested": [{"x": 1}, [], {}, [[1, 2]], None]},
        "scalars": [True, False, 0, -7, 2**70, 1.0, 1e-7, float("inf"), float("nan"), None],
        "when": [datetime.date(2024, 2, 29), datetime.datetime(2024, 2, 29, 12, 0)],
        "binary": b"\x00\xff",
        "text": ["line one\nline two\n", "  leading", "trailing ", "# not a comment", "a: b"],
        "unicode": ["naïve", "日本", "\u2028", "tab\there", "'quote'", '"dq"', "- dash"],
        "long": "x" * 300,
        "10": "a key that reads as a number",
        "": "an empty key",
    }
    expected = yaml.dump(body, Dumper=Plain, sort_keys=True, default_flow_style=False, width=WIDE)
    assert "".join(dump_lines(body)) == expected
    assert "".join(dump_lines(body)) == expected  # the scalars' types remembered now, the same
    assert "'true'" in expected and "|" in expected  # the cases above do reach the emitter's rules


def test_an_object_every_profile_renders_alike_is_diffed_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A CRD renders the same text at every profile, so parses into the same objects: its diff
    (difflib over thousands of lines) is made once, and every profile shows it."""
    import bot.model.rendered_diff as rendered_diff

    made: list[str] = []
    real = rendered_diff._unified
    monkeypatch.setattr(
        rendered_diff,
        "_unified",
        lambda old, new, **names: made.append("") or real(old, new, **names),
    )
    old = doc("CustomResourceDefinition", "crd", {"spec": {"description": "old words"}})
    new = doc("CustomResourceDefinition", "crd", {"spec": {"description": "new words"}})
    profiles = ("a", "b", "c")
    chart = ChartRenders(
        path="web",
        name="web",
        base={p: Rendered(p, (old,)) for p in profiles},
        head={p: Rendered(p, (new,)) for p in profiles},
    )
    diff = chart_diff("web", rendered_diffs(chart, DiffConfig()))
    assert diff is not None
    assert [p.text for p in diff.profiles] == [diff.profiles[0].text] * 3
    assert "+  description: new words" in diff.profiles[0].text
    assert len(made) == 1
    # The same text parsed anew (another object) is diffed again: found by identity alone.
    again = Document(new.kind, new.name, new.namespace, new.template, dict(new.body))
    chart = ChartRenders("web", "web", {"a": Rendered("a", (old,))}, {"a": Rendered("a", (again,))})
    rendered_diffs(chart, DiffConfig())
    assert len(made) == 2


# Lines as dumps have them: few distinct ones, so that difflib's matcher meets many equal
# candidates, and a popular one past 1% of 200+ lines (its autojunk rule) where the lists are long.
_LINES = st.sampled_from(
    ["spec:\n", "  type: string\n", "  description: a\n", "  description: b\n", "- name: x\n", "\n"]
)


@st.composite
def _edited(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    old = draw(st.lists(_LINES, max_size=400))
    new = list(old)
    for _ in range(draw(st.integers(0, 8))):
        at = draw(st.integers(0, len(new)))
        cut = draw(st.integers(0, 5))
        new[at : at + cut] = draw(st.lists(_LINES, max_size=5))
    return old, new


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_edited())
def test_the_compiled_matcher_diffs_as_the_stdlibs(
    pair: tuple[list[str], list[str]],
) -> None:
    """The diff is made with cydifflib, which must say what the stdlib's difflib says, line for
    line, on what the diff hands it (its junk heuristics included)."""
    import bot.model.rendered_diff as rendered_diff

    old, new = pair
    ours = list(rendered_diff._unified(old, new, fromfile="a/x", tofile="b/x"))
    real = rendered_diff.unified_diff
    try:
        rendered_diff.unified_diff = difflib.unified_diff  # type: ignore[assignment]
        stdlib = list(rendered_diff._unified(old, new, fromfile="a/x", tofile="b/x"))
    finally:
        rendered_diff.unified_diff = real
    assert ours == stdlib
    assert (old == new) == (ours == [])


def test_an_object_named_at_random_in_each_render_is_diffed_as_one() -> None:
    """jenkinsci's test pod is `RELEASE-ui-test-{{ randAlphaNum 5 | lower }}`: not one removed and
    one added object on every PR (which the duplicates check then found in every pair of PRs), but
    the same object, unchanged, or changed where it changed."""
    spec = {"spec": {"containers": [{"name": "t", "image": "jenkins:1"}]}}
    old = (doc("Pod", "release-ui-test-4fwxs", spec), doc("ConfigMap", "c", {"data": {"a": "1"}}))
    new = (doc("Pod", "release-ui-test-ejfro", spec), doc("ConfigMap", "c", {"data": {"a": "1"}}))
    diff = chart_diff("web", rendered_diffs(renders(old, new), DiffConfig()))
    assert diff is not None and diff.profiles[0].status == UNCHANGED

    changed = {"spec": {"containers": [{"name": "t", "image": "jenkins:2"}]}}
    new = (doc("Pod", "release-ui-test-ejfro", changed),)
    diff = chart_diff("web", rendered_diffs(renders(old[:1], new), DiffConfig()))
    assert diff is not None
    (profile,) = diff.profiles
    assert [o.key for o in profile.objects] == ["Pod/default/release-ui-test-ejfro"]
    assert "-  - image: jenkins:1\n+  - image: jenkins:2\n" in profile.text
    assert "4fwxs" not in profile.text


def test_two_objects_that_could_each_be_the_other_are_not_paired() -> None:
    """Where two objects could each be the one named anew, no pairing is a guess: both said."""
    spec = {"spec": {"containers": [{"name": "t"}]}}
    old = (doc("Pod", "job-aaaa1", spec), doc("Pod", "job-aaaa2", spec))
    new = (doc("Pod", "job-bbbb1", spec), doc("Pod", "job-bbbb2", spec))
    diff = chart_diff("web", rendered_diffs(renders(old, new), DiffConfig()))
    assert diff is not None
    assert len(diff.profiles[0].objects) == 4


def test_a_chart_compared_on_some_profiles_only_says_which_were_not() -> None:
    from bot.model.rendered_diff import NOT_COMPARED, ChartDiff, ProfileDiff
    from bot.report.diff_section import unchanged_line

    chart = ChartDiff(
        "web",
        (ProfileDiff("aks", UNCHANGED), ProfileDiff("eks", NOT_COMPARED, note="it did not render")),
    )
    assert unchanged_line(chart, "web") == (
        "web: no change where compared; not compared on 1 of 2 profiles"
    )
    assert unchanged_line(ChartDiff("web", ()), "web") == "web: not compared, nothing was rendered"
