"""`file://` dependencies resolved from the same commit: real git repositories, real Helm renders."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from bot.charts.archive import UnsafeTreeError
from bot.charts.dependencies import MAX_DEPTH, DependencyError, LocalChart, local_charts
from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model.context import ChartRenders, Context
from bot.model.report import Report
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from checks import REGISTRY
from tests.support.gitbuilder import GitBuilder

LIBRARY = "apiVersion: v2\nname: {name}\nversion: 1.0.0\ntype: library\n"
HELPER = '{{{{- define "{name}.labels" -}}}}\nteam: {team}\n{{{{- end -}}}}\n'
CONFIGMAP = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{{{ .Release.Name }}}}-{name}\n"
    '  labels:\n    {{{{- include "{helper}.labels" . | nindent 4 }}}}\n'
)


def chart_yaml(name: str, *deps: tuple[str, str], kind: str = "application") -> str:
    """`deps`: (name, repository) pairs."""
    text = f"apiVersion: v2\nname: {name}\nversion: 1.0.0\ntype: {kind}\n"
    if deps:
        text += "dependencies:\n" + "".join(
            f"  - name: {n}\n    version: 1.0.0\n    repository: {r}\n" for n, r in deps
        )
    return text


def library(g: GitBuilder, path: str, name: str = "common", team: str = "blue") -> GitBuilder:
    g.write(f"{path}/Chart.yaml", LIBRARY.format(name=name))
    return g.write(f"{path}/templates/_labels.tpl", HELPER.format(name=name, team=team))


def user(g: GitBuilder, path: str, repository: str = "file://../common") -> GitBuilder:
    """A chart `web` whose ConfigMap takes its labels from library `common` at `repository`."""
    g.write(f"{path}/Chart.yaml", chart_yaml("web", ("common", repository)))
    g.write(f"{path}/values.yaml", "{}\n")
    return g.write(f"{path}/templates/cm.yaml", CONFIGMAP.format(name="web", helper="common"))


@pytest.fixture
def repo(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    library(g, "charts/common")
    return user(g, "charts/web").commit("init")


def run(g: GitBuilder, engine: Engine | None = None, **kw: object) -> tuple[Report, Context]:
    engine = engine or Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache())
    result = engine.review(ReviewInput(base="develop", head="pr", **kw))  # type: ignore[arg-type]
    return result.report, result.context


def web(ctx: Context) -> ChartRenders:
    (chart,) = [c for c in ctx.charts if c.path == "charts/web"]
    return chart


def labels(chart: ChartRenders, side: str, key: str = "ConfigMap/default/release-web") -> object:
    rendered = chart.side(side)["default"]
    assert rendered.error is None, rendered.error
    (doc,) = [d for d in rendered.documents if d.key == key]
    return doc.body["metadata"]["labels"]


def test_a_library_from_file_renders_its_helper_into_the_dependent(repo: GitBuilder) -> None:
    repo.branch("pr").write("charts/web/values.yaml", "a: 1\n").commit("values")
    report, ctx = run(repo)
    chart = web(ctx)
    assert labels(chart, "base") == labels(chart, "head") == {"team": "blue"}
    (summary,) = report.charts
    assert (summary.path, summary.not_reviewed, summary.render_errors) == ("charts/web", None, ())


def test_a_chain_puts_each_dependency_under_the_chart_that_declares_it(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    library(g, "libs/c", name="c", team="from-c")
    g.write("apps/b/Chart.yaml", chart_yaml("b", ("c", "file://../../libs/c")))
    g.write("apps/b/values.yaml", "{}\n")
    g.write("apps/b/templates/cm.yaml", CONFIGMAP.format(name="b", helper="c"))
    g.write("apps/a/Chart.yaml", chart_yaml("a", ("b", "file://../b"))).commit("init")
    g.branch("pr").write("apps/a/values.yaml", "{}\n").commit("values")
    assert local_charts(GitRepo(g.path).tree("pr"), "apps/a") == (
        LocalChart("apps/a"),
        LocalChart("apps/b", "charts/b/"),
        LocalChart("libs/c", "charts/b/charts/c/"),
    )
    _, ctx = run(g)
    (chart,) = ctx.charts
    rendered = chart.head["default"]
    assert rendered.error is None, rendered.error
    (doc,) = rendered.documents
    assert (doc.key, doc.body["metadata"]["labels"]) == (
        "ConfigMap/default/release-b",
        {"team": "from-c"},
    )


def test_base_and_head_each_render_with_their_own_commits_library(repo: GitBuilder) -> None:
    library(repo.branch("pr"), "charts/common", team="green").commit("library")
    engine = Engine(GitRepo(repo.path), EmbeddedHelm(), REGISTRY, RenderCache())
    # Only the library changed: the dependent is asked for by name (chart selection is not
    # dependency-aware).
    _, ctx = run(repo, engine, charts=("charts/web",))
    chart = web(ctx)
    assert labels(chart, "base") == {"team": "blue"}
    assert labels(chart, "head") == {"team": "green"}


class CountingRenderer:
    """The real embedded renderer, counting how often Helm actually runs."""

    def __init__(self) -> None:
        self.inner = EmbeddedHelm()
        self.version = self.inner.version
        self.calls = 0

    def render(self, archive, values, release, namespace):  # type: ignore[no-untyped-def]
        self.calls += 1
        return self.inner.render(archive, values, release, namespace)


def test_the_render_cache_is_keyed_by_the_dependencies_too(repo: GitBuilder) -> None:
    repo.branch("pr").write("charts/web/values.yaml", "a: 1\n").commit("values")
    counting = CountingRenderer()
    engine = Engine(GitRepo(repo.path), counting, REGISTRY, RenderCache())
    run(repo, engine)
    run(repo, engine)
    assert counting.calls == 2  # base and head once; the second review was served from the cache
    library(repo, "charts/common", team="green").commit("library too")
    _, ctx = run(repo, engine, charts=("charts/web",))
    assert counting.calls == 3  # the head again: its library changed, its own tree did not
    assert labels(web(ctx), "base") == {"team": "blue"}
    assert labels(web(ctx), "head") == {"team": "green"}


def test_a_dependency_leaving_the_repository_is_refused(repo: GitBuilder) -> None:
    user(repo.branch("pr"), "charts/web", "file://../../../outside").commit("escape")
    report, _ = run(repo)
    (finding,) = [f for f in report.findings if f.rule == "unsafe-tree"]
    assert finding.severity == "failure"
    assert (
        "charts/web/Chart.yaml: dependency common: file://../../../outside leaves the repository; "
        "refused, not followed"
    ) in finding.message


def test_an_absolute_dependency_path_is_refused(repo: GitBuilder) -> None:
    user(repo.branch("pr"), "charts/web", "file:///etc").commit("absolute")
    report, _ = run(repo)
    (finding,) = [f for f in report.findings if f.rule == "unsafe-tree"]
    assert "dependency common: file:///etc is an absolute path" in finding.message


def test_a_symlink_inside_a_dependency_is_refused(repo: GitBuilder, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("MARKER-51c2\n")
    repo.branch("pr").symlink("charts/common/files/key.txt", str(tmp_path / "secret.txt"))
    repo.write("charts/web/values.yaml", "a: 1\n").commit("link")
    report, _ = run(repo)
    (finding,) = [f for f in report.findings if f.rule == "unsafe-tree" and f.chart == "charts/web"]
    assert "charts/common/files/key.txt: is a symbolic link; refused" in finding.message
    assert "MARKER-51c2" not in report.to_json_text()


def test_a_missing_dependency_directory_is_a_render_error_naming_it(repo: GitBuilder) -> None:
    user(repo.branch("pr"), "charts/web", "file://../commons").commit("typo")
    report, ctx = run(repo)
    error = web(ctx).head["default"].error
    assert error is not None and not error.unavailable
    assert error.message == (
        "charts/web/Chart.yaml: dependency common: file://../commons names no chart at this "
        "commit (charts/commons/Chart.yaml does not exist)"
    )
    (finding,) = [f for f in report.findings if f.check == "render" and f.rule == "head-fails"]
    assert (finding.severity, finding.path, finding.line) == ("failure", "charts/web/Chart.yaml", 8)


def test_a_cycle_is_a_render_error_naming_it(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    g.write("charts/a/Chart.yaml", chart_yaml("a", ("b", "file://../b")))
    g.write("charts/b/Chart.yaml", chart_yaml("b", ("a", "file://../a"))).commit("init")
    g.branch("pr").write("charts/a/values.yaml", "{}\n").commit("values")
    _, ctx = run(g, charts=("charts/a",))
    error = ctx.charts[0].head["default"].error
    assert error is not None
    assert error.message == (
        "charts/b/Chart.yaml: file:// dependencies form a cycle: charts/a → charts/b → charts/a"
    )


def test_a_chain_deeper_than_the_bound_is_not_followed(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    for level in range(MAX_DEPTH + 1):
        g.write(
            f"c{level}/Chart.yaml",
            chart_yaml(f"c{level}", (f"c{level + 1}", f"file://../c{level + 1}")),
        )
    g.write(f"c{MAX_DEPTH + 1}/Chart.yaml", chart_yaml(f"c{MAX_DEPTH + 1}")).commit("deep")
    tree = GitRepo(g.path).tree("develop")
    assert len(local_charts(tree, "c1")) == MAX_DEPTH + 1  # ten levels below c1: followed
    with pytest.raises(DependencyError, match=f"nest deeper than {MAX_DEPTH} levels"):
        local_charts(tree, "c0")


def test_the_dependencys_own_helmignore_applies(repo: GitBuilder) -> None:
    # Helm would fail to parse this template, had it been packaged.
    repo.branch("pr").write("charts/common/templates/_draft.tpl", "{{ end }}\n")
    repo.write("charts/common/.helmignore", "templates/_draft.tpl\n").commit("draft")
    _, ctx = run(repo, charts=("charts/web",))
    assert labels(web(ctx), "head") == {"team": "blue"}


def test_an_unpacked_vendored_subchart_takes_precedence(repo: GitBuilder) -> None:
    library(repo.branch("pr"), "charts/web/charts/common", team="vendored").commit("vendor")
    _, ctx = run(repo)
    assert labels(web(ctx), "head") == {"team": "vendored"}


def test_a_packaged_vendored_subchart_takes_precedence(repo: GitBuilder) -> None:
    files = {
        "common/Chart.yaml": LIBRARY.format(name="common"),
        "common/templates/_labels.tpl": HELPER.format(name="common", team="packaged"),
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    repo.branch("pr")
    (repo.path / "charts/web/charts").mkdir()
    (repo.path / "charts/web/charts/common-1.0.0.tgz").write_bytes(buffer.getvalue())
    repo.commit("vendor packaged")
    _, ctx = run(repo)
    assert labels(web(ctx), "head") == {"team": "packaged"}


def test_dependencies_from_elsewhere_are_left_to_helm(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    user(g, "charts/web", "https://charts.example.test").commit("init")
    tree = GitRepo(g.path).tree("develop")
    assert local_charts(tree, "charts/web") == (LocalChart("charts/web"),)


def test_a_path_up_to_the_repository_root_is_not_an_escape(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    g.write("Chart.yaml", LIBRARY.format(name="common"))
    user(g, "charts/web", "file://../..").commit("root library")
    tree = GitRepo(g.path).tree("develop")
    assert local_charts(tree, "charts/web")[1] == LocalChart(".", "charts/common/")
    user(g, "charts/web", "file://../../..").commit("beyond")
    with pytest.raises(UnsafeTreeError, match="file://../../.. leaves the repository"):
        local_charts(GitRepo(g.path).tree("develop"), "charts/web")


CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.test
spec:
  group: example.test
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
"""
GUARDED = """\
{{- if .Capabilities.APIVersions.Has "example.test/v1" }}
apiVersion: example.test/v1
kind: Widget
metadata:
  name: {{ .Release.Name }}-widget
{{- end }}
"""


def test_a_dependencys_crds_define_api_versions_as_an_unpacked_subcharts_do(
    tmp_path: Path,
) -> None:
    g = GitBuilder(tmp_path / "repo")
    g.write("charts/ops/Chart.yaml", chart_yaml("ops")).write("charts/ops/crds/widget.yaml", CRD)
    g.write("charts/web/Chart.yaml", chart_yaml("web", ("ops", "file://../ops")))
    g.write("charts/web/templates/widget.yaml", GUARDED).commit("init")
    g.branch("pr").write("charts/web/values.yaml", "{}\n").commit("values")
    _, ctx = run(g, charts=("charts/web",))
    rendered = ctx.charts[0].head["default"]
    assert rendered.error is None, rendered.error
    assert [d.kind for d in rendered.documents] == ["Widget"]


def test_a_pr_changing_only_the_library_reviews_the_charts_that_use_it(repo: GitBuilder) -> None:
    """The library renders nothing of its own: what it changes shows in its dependents."""
    library(repo.branch("pr"), "charts/common", team="green").commit("labels")
    report, ctx = run(repo)
    assert [c.path for c in report.charts] == ["charts/common", "charts/web"]
    chart = web(ctx)
    assert (labels(chart, "base"), labels(chart, "head")) == ({"team": "blue"}, {"team": "green"})


def test_objects_a_dependency_renders_name_its_own_template(tmp_path: Path) -> None:
    """A dependency's template is copied under the dependent's charts/ to render; a finding in it
    points at the file in the repository, not at that copy."""
    g = GitBuilder(tmp_path / "repo")
    g.write("charts/common/Chart.yaml", chart_yaml("common"))
    plain = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-common\n"
    g.write("charts/common/templates/cm.yaml", plain)
    g.write("charts/common/templates/_labels.tpl", HELPER.format(name="common", team="blue"))
    user(g, "charts/web").commit("init").branch("pr").write("charts/web/values.yaml", "a: 1\n")
    _, ctx = run(g.commit("values"))
    rendered = web(ctx).side("head")["default"]
    assert rendered.error is None, rendered.error
    assert sorted(d.template for d in rendered.documents) == [
        "charts/common/templates/cm.yaml",
        "charts/web/templates/cm.yaml",
    ]


def test_a_directory_refused_is_refused_again_by_its_tree_alone(
    repo: GitBuilder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The next commit leaves the dependency's directory as it was: its tree id says the same,
    # and nothing in it is read again (the base of every PR against develop asks this).
    from bot.charts import helm_input

    repo.branch("pr").symlink("charts/common/files/key.txt", str(tmp_path / "x"))
    first = repo.commit("link").sha("pr")
    second = repo.write("charts/web/values.yaml", "a: 2\n").commit("values").sha("pr")
    git = GitRepo(repo.path)
    said = helm_input.unsafe_reason(git.tree(first), "charts/common")
    assert said is not None and "charts/common/files/key.txt: is a symbolic link" in said
    looked: list[str] = []
    monkeypatch.setattr(helm_input, "check_entry", lambda path, entry: looked.append(path))
    assert helm_input.unsafe_reason(git.tree(second), "charts/common") == said
    assert not looked
    assert helm_input.unsafe_reason(git.tree(second), "charts/web") is None and looked  # read once
