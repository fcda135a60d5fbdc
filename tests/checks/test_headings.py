"""The `headings` check on real git repositories: references the PR adds or writes, in this
repository and in a linked one, and headings the PR removes while something still quotes them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.cli.links import local_resolver
from bot.git.objects import Commit
from bot.git.repo import GitRepo
from bot.model.config import Config, LinksConfig
from bot.model.context import (
    Context,
    LinkedRepo,
    OpenPR,
    PullRequestInfo,
    RepoResolver,
    no_links,
)
from bot.model.links import not_readable
from bot.model.report import Finding, Severity
from checks.headings.check import CHECK, explain, run
from tests.support.gitbuilder import GitBuilder

JOBS = "client/templates/jobs-manager-deployment.yaml"
JOBS_YAML = """\
apiVersion: apps/v1
kind: Deployment
spec:
  # ROLLBACK ON THE DEGRADED PATH — recorded decision, backend#1922.
  revisionHistoryLimit: 3
  template:
    spec:
      containers:
        # READINESS ONLY — no livenessProbe AND no startupProbe, deliberately.
        - name: jobs
"""


@pytest.fixture
def repos() -> Iterator[list[GitRepo]]:
    opened: list[GitRepo] = []
    yield opened
    for repo in opened:
        repo.close()


@pytest.fixture
def make_ctx(repos: list[GitRepo]) -> Callable[..., Context]:
    def build(
        g: GitBuilder,
        head: str = "pr",
        body: str = "",
        links: RepoResolver = no_links,
        open_prs: tuple[OpenPR, ...] = (),
        config: Config | None = None,
    ) -> Context:
        repo = GitRepo(g.path)
        repos.append(repo)
        tip, head_sha = g.sha("develop"), g.sha(head)
        base = repo.merge_base(tip, head_sha)
        assert base is not None
        commits = repo.log(f"{base}..{head_sha}")
        return Context(
            config=config or Config(),
            git=repo,
            base=repo.tree(base),
            head=repo.tree(head_sha),
            target=repo.tree(tip),
            develop=None,
            changes=repo.changes(base, head_sha),
            charts=(),
            open_prs=open_prs,
            pr=PullRequestInfo(number=7, title="Review me", body=body, commits=commits),
            links=links,
        )

    return build


def chart_repo(path: Path) -> GitBuilder:
    return GitBuilder(path).write(JOBS, JOBS_YAML).write("README.md", "# Charts\n").commit("init")


def only(findings: list[Finding]) -> Finding:
    assert len(findings) == 1, findings
    return findings[0]


def test_check_is_declared_for_the_repository() -> None:
    assert (CHECK.name, CHECK.title, CHECK.scope, CHECK.explain) == (
        "headings",
        "Heading references",
        "repo",
        explain,
    )


def test_a_reference_that_resolves_once_is_quiet_and_explained(tmp_path: Path, make_ctx) -> None:
    g = chart_repo(tmp_path / "r").branch("pr")
    g.write(
        "docs/ops.md",
        "# Ops\n\nSee ROLLBACK ON THE DEGRADED PATH in jobs-manager-deployment.yaml.\n",
    )
    ctx = make_ctx(g.commit("docs"))
    assert run(ctx) == []
    assert explain(ctx) == [
        "resolved: “ROLLBACK ON THE DEGRADED PATH” (docs/ops.md line 3) → "
        f"{JOBS} line 4 at the PR head"
    ]


def test_a_missing_heading_is_a_failure_offering_the_closest(tmp_path: Path, make_ctx) -> None:
    g = chart_repo(tmp_path / "r").branch("pr")
    g.write("values.yaml", f'# see "ROLLBACK ON DEGRADED PATH" in {JOBS}\nreplicas: 1\n')
    finding = only(run(make_ctx(g.commit("values"))))
    assert (finding.rule, finding.severity, finding.subject) == (
        "missing",
        Severity.FAILURE,
        "ROLLBACK ON DEGRADED PATH",
    )
    assert (finding.path, finding.line) == ("values.yaml", 1)
    assert finding.data["suggestions"] == ["ROLLBACK ON THE DEGRADED PATH"]
    assert finding.message == (
        f"values.yaml line 1 quotes “ROLLBACK ON DEGRADED PATH” in {JOBS}, but it has no such "
        "heading at the PR head. Closest headings there: “ROLLBACK ON THE DEGRADED PATH” (line 4)."
    )


def test_a_heading_that_appears_twice_lists_both_lines(tmp_path: Path, make_ctx) -> None:
    g = chart_repo(tmp_path / "r").branch("pr")
    g.write(JOBS, JOBS_YAML + "# READINESS ONLY — the sidecar too.\n")
    g.write("docs/ops.md", f"The `READINESS ONLY` note in {JOBS} explains it.\n")
    finding = only(run(make_ctx(g.commit("twice"))))
    assert (finding.rule, finding.severity) == ("duplicated", Severity.FAILURE)
    assert (finding.path, finding.line, finding.data["lines"]) == ("docs/ops.md", 1, [9, 11])
    assert "appears 2 times at the PR head (lines 9, 11)" in finding.message


def test_above_and_below_read_the_same_file(tmp_path: Path, make_ctx) -> None:
    g = chart_repo(tmp_path / "r").branch("pr")
    notes = JOBS_YAML + "          # as READINESS ONLY (above) says\n# and SINGLE REPLICA (below)\n"
    finding = only(run(make_ctx(g.write(JOBS, notes).commit("notes"))))
    assert (finding.rule, finding.subject, finding.path, finding.line) == (
        "missing",
        "SINGLE REPLICA",
        JOBS,
        12,
    )
    assert f"in {JOBS} below line 12" in finding.message


def test_a_basename_several_files_share(tmp_path: Path, make_ctx) -> None:
    g = GitBuilder(tmp_path / "r")
    g.write("api/values.yaml", "# SINGLE REPLICA — leader election is off.\nreplicas: 1\n")
    g.write("worker/values.yaml", "replicas: 3\n").commit("init").branch("pr")
    g.write(
        "docs/a.md",
        "SINGLE REPLICA (values.yaml) is why.\n\nAnd see `LEADER ELECTION OFF` in values.yaml.\n",
    )
    finding = only(run(make_ctx(g.commit("docs"))))
    assert (finding.rule, finding.severity, finding.subject) == (
        "ambiguous",
        Severity.WARNING,
        "LEADER ELECTION OFF",
    )
    assert finding.data["candidates"] == ["api/values.yaml", "worker/values.yaml"]
    assert finding.message.endswith("and none of them holds the heading. Name the path.")


def test_a_reference_already_broken_at_base_is_not_the_prs_doing(tmp_path: Path, make_ctx) -> None:
    g = chart_repo(tmp_path / "r").write("docs/a.md", f'See "NO SUCH HEADING" in {JOBS}.\n\nv1\n')
    g.commit("broken before").branch("pr")
    ctx = make_ctx(g.write("docs/a.md", f'See "NO SUCH HEADING" in {JOBS}.\n\nv2\n').commit("v2"))
    assert run(ctx) == []


def test_a_reference_the_pr_only_reformatted_is_folded_not_failed(tmp_path: Path, make_ctx) -> None:
    """Found on a public repository (issue 38): a PR turned a changelog's `*` bullets into `-`, and
    every old entry's "Update `k8saudit` section in README.md" was checked as the PR's own."""
    old = "# Changelog\n\n## v3.1.1\n\n* Update `k8saudit` section in README.md file.\n"
    g = chart_repo(tmp_path / "r").write("CHANGELOG.md", old).commit("changelog").branch("pr")
    g.write("CHANGELOG.md", old.replace("* ", "- ") + "\n- See `SIDECARS` section in README.md.\n")
    findings = run(make_ctx(g.commit("bullets, and one new entry")))
    assert sorted((f.subject, f.severity, f.preexisting) for f in findings) == [
        ("SIDECARS", Severity.FAILURE, False),  # the PR's own reference still fails
        ("k8saudit", Severity.NOTICE, True),
    ]


def test_quoted_caps_with_no_file_is_explained_not_checked(tmp_path: Path, make_ctx) -> None:
    g = (
        chart_repo(tmp_path / "r")
        .branch("pr")
        .write("docs/a.md", 'Keep "WHY THIS EXISTS" short.\n')
    )
    ctx = make_ctx(g.commit("docs"))
    assert run(ctx) == []
    [line] = explain(ctx)
    assert line.startswith("not checked: “WHY THIS EXISTS” in docs/a.md line 1 names no file")


# -- the other direction --------------------------------------------------------------------------


def reworded(path: Path) -> GitBuilder:
    g = chart_repo(path).write("docs/ops.md", f"# Ops\n\nROLLBACK ON THE DEGRADED PATH ({JOBS}).\n")
    g.commit("docs").branch("pr")
    return g.write(JOBS, JOBS_YAML.replace("ON THE DEGRADED", "ON ANY DEGRADED")).commit("reword")


def test_a_reworded_heading_still_quoted_elsewhere_fails(tmp_path: Path, make_ctx) -> None:
    finding = only(run(make_ctx(reworded(tmp_path / "r"))))
    assert (finding.rule, finding.severity, finding.subject) == (
        "removed-still-quoted",
        Severity.FAILURE,
        "ROLLBACK ON THE DEGRADED PATH",
    )
    assert (finding.path, finding.line) == (JOBS, 4)
    assert finding.data["base_line"] == 4
    assert finding.data["new_wording"] == "ROLLBACK ON ANY DEGRADED PATH"
    assert finding.data["referrers"] == ["docs/ops.md line 3"]


def test_a_rewording_quoted_only_by_the_pr_itself_is_a_notice(tmp_path: Path, make_ctx) -> None:
    g = chart_repo(tmp_path / "r").write(
        "assess.sh", "#!/bin/sh\n# STRICTLY NON-MUTATING.\nkubectl get pods\n"
    )
    g.commit("script").branch("pr")
    g.write("assess.sh", "#!/bin/sh\n# MUTATES THE CLUSTER.\nkubectl delete pod x\n").commit(
        "mutate"
    )
    body = "assess.sh says STRICTLY NON-MUTATING, and this branch mutates."
    finding = only(run(make_ctx(g, body=body)))
    assert (finding.rule, finding.severity, finding.path, finding.line) == (
        "reworded-explained",
        Severity.NOTICE,
        "assess.sh",
        2,
    )
    assert finding.message.startswith(
        "This PR rewords the heading “STRICTLY NON-MUTATING” (assess.sh line 2 at base) to "
        "“MUTATES THE CLUSTER”; only the PR description quotes the old wording"
    )


def test_half_of_a_paired_heading_changed_is_a_warning(tmp_path: Path, make_ctx) -> None:
    g = GitBuilder(tmp_path / "r")
    g.write(
        "chart/templates/pdb.yaml",
        "# PAIRED WITH ITS TEST — keep both.\nkind: PodDisruptionBudget\n",
    )
    g.write("chart/tests/pdb_test.yaml", "# PAIRED WITH ITS TEST — keep both.\nsuite: pdb\n")
    g.commit("init").branch("pr")
    g.write(
        "chart/templates/pdb.yaml",
        "# PAIRED WITH THE TEST — keep both.\nkind: PodDisruptionBudget\n",
    )
    finding = only(run(make_ctx(g.commit("half"))))
    assert (finding.rule, finding.severity, finding.path, finding.line) == (
        "paired-half",
        Severity.WARNING,
        "chart/templates/pdb.yaml",
        1,
    )
    assert finding.data["other"] == "chart/tests/pdb_test.yaml"
    assert "still does (line 1)" in finding.message


# -- another repository ---------------------------------------------------------------------------


def backend(path: Path) -> GitBuilder:
    """A linked repository whose develop lacks the heading and whose PR #12 adds it."""
    g = (
        GitBuilder(path)
        .write("deploy/jobs.yaml", "# SINGLE REPLICA — on purpose.\n")
        .commit("init")
    )
    g.branch("rollback").write(
        "deploy/jobs.yaml", "# SINGLE REPLICA\n# ROLLBACK ON THE DEGRADED PATH\n"
    )
    return g.commit("rollback").pull_ref(12, "rollback").checkout("develop")


def test_a_heading_only_on_another_repos_open_pr_names_the_merge_order(
    tmp_path: Path, make_ctx
) -> None:
    links = local_resolver({"acme/backend": (str(backend(tmp_path / "backend").path), None)})
    g = chart_repo(tmp_path / "r").branch("pr")
    g.write(
        "values.yaml",
        "# see ROLLBACK ON THE DEGRADED PATH in acme/backend:deploy/jobs.yaml\nx: 1\n",
    )
    finding = only(run(make_ctx(g.commit("link"), links=links)))
    assert (finding.rule, finding.severity, finding.path, finding.line) == (
        "merge-order",
        Severity.WARNING,
        "values.yaml",
        1,
    )
    assert finding.data["pr"] == 12
    assert "resolves only once acme/backend#12 merges; merge that first" in finding.message


def test_a_cross_repository_reference_from_the_pr_description(tmp_path: Path, make_ctx) -> None:
    links = local_resolver({"acme/backend": (str(backend(tmp_path / "backend").path), None)})
    g = chart_repo(tmp_path / "r").branch("pr").write("values.yaml", "x: 1\n").commit("x")
    body = (
        "Mirrors https://github.com/acme/backend/blob/develop/deploy/jobs.yaml "
        "§ SINGLE REPLICA.\n\n"
        "Also acme/other:deploy/a.yaml says `WHY THIS EXISTS`."
    )
    ctx = make_ctx(g, body=body, links=links)
    finding = only(run(ctx))
    assert (finding.rule, finding.severity, finding.path, finding.line) == (
        "unverifiable",
        Severity.NOTICE,
        None,
        None,
    )
    assert finding.message == (
        "the PR description quotes “WHY THIS EXISTS” in acme/other:deploy/a.yaml: not linked; "
        "pass --link OWNER/NAME=PATH."
    )
    assert explain(ctx)[0] == (
        "resolved: “SINGLE REPLICA” (the PR description) → acme/backend:deploy/jobs.yaml line 1 "
        "on acme/backend's develop"
    )


def test_a_squash_commit_repeating_the_description_reports_once(tmp_path: Path, make_ctx) -> None:
    g = chart_repo(tmp_path / "r").branch("pr")
    text = f'Follows "NO SUCH RULE HERE" in {JOBS}.'
    ctx = make_ctx(g.write("values.yaml", "x: 1\n").commit(text), body=text)
    assert ctx.pr.commits == (Commit(g.sha("pr"), text, text),)
    finding = only(run(ctx))
    assert (finding.rule, finding.data["source"]) == ("missing", "the PR description")


def test_a_heading_only_on_an_open_pr_of_this_repository(tmp_path: Path, make_ctx) -> None:
    g = chart_repo(tmp_path / "r").branch("other")
    g.write("values.yaml", "# SINGLE REPLICA — see the PDB.\nx: 1\n").commit("other")
    g.checkout("develop").branch("pr").write("docs/a.md", "See SINGLE REPLICA in values.yaml\n")
    g.write("values.yaml", "x: 2\n").commit("pr")
    ctx = make_ctx(g, open_prs=(OpenPR(number=5, head=g.sha("other")),))
    finding = only(run(ctx))
    assert (finding.rule, finding.path, finding.line) == ("merge-order", "docs/a.md", 1)
    assert "resolves only once #5 merges; merge that first" in finding.message


def test_deleting_a_quoted_file_fails_on_the_file_with_no_line(tmp_path: Path, make_ctx) -> None:
    g = chart_repo(tmp_path / "r").write("docs/ops.md", f"See READINESS ONLY in {JOBS}.\n")
    g.commit("docs").branch("pr").remove(JOBS).commit("drop jobs")
    finding = only(run(make_ctx(g)))
    assert (finding.rule, finding.path, finding.line) == ("removed-still-quoted", JOBS, None)
    assert finding.data["base_line"] == 9
    assert finding.message == (
        f"This PR removes the heading “READINESS ONLY” ({JOBS} line 9 at base), but it is still "
        "quoted by docs/ops.md line 1. Update them in this PR, or keep the heading."
    )


def test_bare_capitals_far_from_any_heading_are_emphasis(tmp_path: Path, make_ctx) -> None:
    g = chart_repo(tmp_path / "r").branch("pr").write("values.yaml", "x: 1\n")
    text = "Drop a key\n\nBREAKING CHANGE: values.yaml loses `x`. Also (below) nothing."
    ctx = make_ctx(g.commit(text))
    assert run(ctx) == []
    assert explain(ctx) == [
        "not checked: “BREAKING CHANGE” in commit "
        f"{g.sha('pr')[:7]} near values.yaml matches no heading there, nor comes close to one: "
        "read as emphasis, not a reference (write “see “…” in FILE” to have it checked)"
    ]


def test_above_in_the_pr_text_names_no_file(tmp_path: Path, make_ctx) -> None:
    g = chart_repo(tmp_path / "r").branch("pr").write("values.yaml", "x: 1\n").commit("x")
    ctx = make_ctx(g, body='As "READINESS ONLY" (above) says.')
    assert run(ctx) == []
    assert explain(ctx)[0].startswith("not checked: “READINESS ONLY” in the PR description names")


def _quoting_backend(tmp_path: Path, *names: str) -> GitBuilder:
    """A PR whose values.yaml quotes ROLLBACK ON THE DEGRADED PATH in each of `names`."""
    lines = "".join(f"# see ROLLBACK ON THE DEGRADED PATH in {n}:deploy/jobs.yaml\n" for n in names)
    g = chart_repo(tmp_path / "r").branch("pr")
    return g.write("values.yaml", lines + "x: 1\n").commit("link")


def test_an_unreadable_repository_is_said_in_one_sentence_and_nothing_else(
    tmp_path: Path, make_ctx
) -> None:
    def unreadable(name: str) -> LinkedRepo:
        return not_readable(name)

    finding = only(run(make_ctx(_quoting_backend(tmp_path, "acme/secret"), links=unreadable)))
    assert (finding.rule, finding.severity, finding.title) == (
        "unverifiable",
        Severity.NOTICE,
        "Quoted heading could not be verified",
    )
    assert finding.message == (
        "values.yaml line 1 quotes “ROLLBACK ON THE DEGRADED PATH” in "
        "acme/secret:deploy/jobs.yaml: not checked: acme/secret is not readable for this "
        "repository."
    )
    assert finding.data == {
        "source": "values.yaml line 1",
        "file": "acme/secret:deploy/jobs.yaml",
        "repo": "acme/secret",
    }


def test_the_config_allow_list_narrows_even_a_link_given_on_the_command_line(
    tmp_path: Path, make_ctx
) -> None:
    links = local_resolver({"acme/backend": (str(backend(tmp_path / "backend").path), None)})
    config = Config(links=LinksConfig(repositories=["acme/frontend", "tools/*"]))
    ctx = make_ctx(_quoting_backend(tmp_path, "acme/backend"), links=links, config=config)
    finding = only(run(ctx))
    assert finding.rule == "unverifiable"
    assert finding.message.endswith(
        ": not checked: acme/backend is not readable for this repository."
    )
    assert "#12" not in finding.message and "pr" not in finding.data


def test_past_the_configured_cap_a_linked_repository_is_not_asked_for(
    tmp_path: Path, make_ctx
) -> None:
    path = str(backend(tmp_path / "backend").path)
    opened = local_resolver({"acme/backend": (path, None), "acme/Second": (path, None)})
    asked: list[str] = []

    def links(name: str) -> LinkedRepo:
        asked.append(name)
        return opened(name)

    config = Config(links=LinksConfig(max_repositories=1))
    g = _quoting_backend(tmp_path, "acme/backend", "Acme/Backend", "acme/Second")
    findings = run(make_ctx(g, links=links, config=config))
    assert asked == ["acme/backend"]  # Acme/Backend is the same repository: no second one
    assert [(f.rule, f.line) for f in findings] == [
        ("merge-order", 1),
        ("merge-order", 2),
        ("unverifiable", 3),
    ]
    assert findings[2].message.endswith(
        ": not checked: more than 1 linked repositories in one review."
    )


def test_references_by_path_list_no_tree_whole(
    tmp_path: Path, make_ctx, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reference that names a file by its path, or relative to the file that writes it, is
    found by walking directories, not by listing every file of a 3,000-file tree at each new
    commit; a basename alone lists the tree, once."""
    g = chart_repo(tmp_path / "r")
    for n in range(40):
        g.write(f"docs/d{n}/page.md", f"# Page {n}\n")
    g.write("api/values.yaml", "# SINGLE REPLICA — leader election is off.\nreplicas: 1\n")
    g.commit("docs").branch("pr")
    g.write(
        "client/templates/job.yaml",
        f'# see "READINESS ONLY" in {JOBS}\n'
        '# and "ROLLBACK ON THE DEGRADED PATH" in jobs-manager-deployment.yaml\nkind: Job\n',
    )
    listed: list[str] = []
    real = GitRepo.file_paths_under
    monkeypatch.setattr(
        GitRepo,
        "file_paths_under",
        lambda self, t, lead="": listed.append(lead) or real(self, t, lead),
    )
    outcome = explain(make_ctx(g.commit("a job")))
    resolved = [line for line in outcome if line.startswith("resolved")]
    assert any("READINESS ONLY" in line for line in resolved)
    assert any("ROLLBACK ON THE DEGRADED PATH" in line for line in resolved)
    assert "" not in listed  # no listing of a whole tree
    g.write("client/templates/job.yaml", "# and “SINGLE REPLICA” in values.yaml\nkind: Job\n")
    outcome = explain(make_ctx(g.commit("by basename")))
    assert any("SINGLE REPLICA" in line and "api/values.yaml" in line for line in outcome)
    assert listed.count("") == 1  # the head's, for its basenames
