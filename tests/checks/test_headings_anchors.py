"""Markdown anchor links in the `headings` check: GitHub's anchor rules (checks/headings/slugs.py),
which links lead to an anchor (checks/headings/mdlinks.py), and the check on real git repositories
(checks/headings/anchors.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli.links import local_resolver
from bot.model.context import OpenPR
from bot.model.report import Severity
from checks.headings.check import explain, run
from checks.headings.mdlinks import anchor_links
from checks.headings.slugs import anchors, inline_text, slug
from tests.checks import test_headings
from tests.checks.test_headings import only
from tests.support.gitbuilder import GitBuilder

# The real-git context of tests/checks/test_headings.py, shared.
repos = test_headings.repos
make_ctx = test_headings.make_ctx

GUIDE = """\
# Operations guide

## Install the `client` chart

## Upgrading  from 1.x

## Upgrading  from 1.x

<a name="legacy-values"></a>

```markdown
## Not a heading
```
"""


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Install the `client` chart", "install-the-client-chart"),
        ("Upgrading  from 1.x", "upgrading--from-1x"),
        ("Foo & Bar: *now* [with](https://x.io) _emphasis_", "foo--bar-now-with-emphasis"),
        ("snake_case_key and `values.yaml`", "snake_case_key-and-valuesyaml"),
        ("Émigré ✨ Größe", "émigré--größe"),
        ("What's new in v2.0?", "whats-new-in-v20"),
    ],
)
def test_github_slugs(heading: str, anchor: str) -> None:
    assert slug(inline_text(heading)) == anchor


def test_anchors_number_repeats_and_honour_html_ids() -> None:
    text = GUIDE + 'Setext title\n============\n\n<div id="raw-id">x</div>\n'
    assert [(a.name, a.line) for a in anchors(text)] == [
        ("operations-guide", 1),
        ("install-the-client-chart", 3),
        ("upgrading--from-1x", 5),
        ("upgrading--from-1x-1", 7),
        ("legacy-values", 9),
        ("setext-title", 14),
        ("raw-id", 17),
    ]


def test_a_repeat_skips_a_name_an_earlier_heading_took() -> None:
    assert [a.name for a in anchors("# a\n# a-1\n# a\n")] == ["a", "a-1", "a-2"]


def test_anchor_link_forms() -> None:
    text = "\n".join(
        [
            "See [install](guide.md#install-the-client-chart), [top](#operations-guide) and",
            "[up](../README.md#usage), charts/x/README.md#values, [web](https://x.io/a.md#b).",
            "[ref]: /docs/ops.md#legacy-values",
            "`[code](guide.md#in-a-code-span)` and [lines](guide.md#L10-L12), [t](## Not a link)",
            "https://github.com/acme/backend/blob/v1.2.0/docs/run.md#run-it and a.yaml#L3",
            "```",
            "[fenced](guide.md#ignored)",
            "```",
        ]
    )
    found = [
        (k.line, k.path, k.anchor, k.repo, k.ref)
        for k in anchor_links("docs/a.md", text.splitlines())
    ]
    assert found == [
        (1, "docs/guide.md", "install-the-client-chart", None, None),
        (1, "docs/a.md", "operations-guide", None, None),
        (2, "README.md", "usage", None, None),
        (2, "charts/x/README.md", "values", None, None),
        (3, "docs/ops.md", "legacy-values", None, None),
        (5, "docs/run.md", "run-it", "acme/backend", "v1.2.0"),
    ]


def test_only_the_wanted_lines_are_read() -> None:
    text = "[a](x.md#one)\n```\n[b](x.md#fenced)\n```\n[c](x.md#three)\n[d](x.md#four)\n"
    wanted = frozenset({0, 3, 5, 6, 99})  # a fence's line, two links, lines that are not there
    found = [(k.line, k.anchor) for k in anchor_links("docs/a.md", text.splitlines(), wanted)]
    assert found == [(5, "three"), (6, "four")]
    assert [
        k.line
        for k in anchor_links("values.yaml", "# x.md#a\n# x.md#b\n".splitlines(), frozenset({2}))
    ] == [2]


def test_pr_text_links_only_through_blob_urls() -> None:
    text = "[a](docs/x.md#a) and https://github.com/acme/charts/blob/main/README.md#usage"
    [link] = anchor_links(None, text.splitlines())
    assert (link.line, link.repo, link.path, link.anchor) == (
        None,
        "acme/charts",
        "README.md",
        "usage",
    )


# -- on real git repositories ---------------------------------------------------------------------


def docs_repo(path: Path) -> GitBuilder:
    g = GitBuilder(path).write("docs/guide.md", GUIDE)
    return g.write("README.md", "# Charts\n\n## Usage\n").commit("init").branch("pr")


def test_a_link_to_a_missing_anchor_fails_naming_the_closest(tmp_path: Path, make_ctx) -> None:
    g = docs_repo(tmp_path / "r")
    g.write("docs/faq.md", "# FAQ\n\nSee [installing](guide.md#install-client-chart).\n")
    finding = only(run(make_ctx(g.commit("faq"))))
    assert (finding.rule, finding.severity, finding.path, finding.line) == (
        "anchor-missing",
        Severity.FAILURE,
        "docs/faq.md",
        3,
    )
    assert finding.subject == "docs/guide.md#install-client-chart"
    assert finding.data["suggestions"] == ["install-the-client-chart"]
    assert finding.message == (
        "docs/faq.md line 3 links to guide.md#install-client-chart, but docs/guide.md has no "
        "anchor #install-client-chart at the PR head. Closest anchors there: "
        "#install-the-client-chart (line 3)."
    )


def test_links_that_resolve_are_quiet_and_explained(tmp_path: Path, make_ctx) -> None:
    g = docs_repo(tmp_path / "r")
    g.write(
        "docs/faq.md",
        "# FAQ\n\n[a](guide.md#upgrading--from-1x-1), [b](#faq), [c](/docs/guide.md#legacy-values)"
        ", [d](guide.md#Operations-Guide)\n\n```\n[x](guide.md#not-a-heading)\n```\n"
        "[e](https://example.com/guide.md#nowhere)\n",
    )
    g.write("values.yaml", "# Options: see README.md#usage\nx: 1\n")
    ctx = make_ctx(g.commit("faq"))
    assert run(ctx) == []
    assert explain(ctx) == [
        "resolved: guide.md#upgrading--from-1x-1 (docs/faq.md line 3) → docs/guide.md line 7",
        "resolved: #faq (docs/faq.md line 3) → docs/faq.md line 1",
        "resolved: /docs/guide.md#legacy-values (docs/faq.md line 3) → docs/guide.md line 9",
        "resolved: guide.md#Operations-Guide (docs/faq.md line 3) → docs/guide.md line 1",
        "resolved: README.md#usage (values.yaml line 1) → README.md line 3",
    ]


def test_a_link_to_a_file_that_is_not_there_is_left_to_link_checkers(
    tmp_path: Path, make_ctx
) -> None:
    g = docs_repo(tmp_path / "r").write("docs/faq.md", "[a](gone.md#x)\n")
    ctx = make_ctx(g.commit("faq"))
    assert run(ctx) == []
    assert explain(ctx) == [
        "not checked: gone.md#x (docs/faq.md line 1): no single file docs/gone.md here"
    ]


def test_a_link_already_broken_at_base_is_a_preexisting_notice(tmp_path: Path, make_ctx) -> None:
    g = GitBuilder(tmp_path / "r").write("docs/guide.md", GUIDE)
    g.write("docs/faq.md", "# FAQ\n\nSee [x](guide.md#nowhere).\n").commit("init").branch("pr")
    g.write("docs/faq.md", "# FAQ\n\nSee [x](guide.md#nowhere), please.\n")
    finding = only(run(make_ctx(g.commit("edit"))))
    assert (finding.rule, finding.severity, finding.preexisting) == (
        "anchor-missing",
        Severity.NOTICE,
        True,
    )
    assert finding.message.endswith("It was already broken at base, so it is not this PR's doing.")


def test_an_anchor_only_on_another_open_pr_says_merge_that_first(tmp_path: Path, make_ctx) -> None:
    g = GitBuilder(tmp_path / "r").write("docs/guide.md", GUIDE).commit("init")
    g.branch("other").write("docs/guide.md", GUIDE + "\n## Rollback\n").commit("rollback")
    g.checkout("develop").branch("pr").write("docs/faq.md", "[r](guide.md#rollback)\n").commit("x")
    finding = only(run(make_ctx(g, open_prs=(OpenPR(number=4, head=g.sha("other")),))))
    assert (finding.rule, finding.severity, finding.data["pr"]) == (
        "anchor-merge-order",
        Severity.WARNING,
        4,
    )
    assert finding.message.endswith(
        "line 15). This resolves only once #4 merges; merge that first."
    )


def test_blob_urls_resolve_in_the_linked_repository(tmp_path: Path, make_ctx) -> None:
    backend = GitBuilder(tmp_path / "backend").write("docs/run.md", "# Run\n\n## Run it\n")
    links = local_resolver({"acme/backend": (str(backend.commit("init").path), None)})
    g = docs_repo(tmp_path / "r")
    g.write(
        "docs/faq.md",
        "[ok](https://github.com/acme/backend/blob/develop/docs/run.md#run-it)\n"
        "[bad](https://github.com/acme/backend/blob/develop/docs/run.md#run-them)\n",
    )
    body = "Also https://github.com/acme/other/blob/main/README.md#usage"
    ctx = make_ctx(g.commit("faq"), body=body, links=links)
    finding = only(run(ctx))
    assert (finding.rule, finding.severity, finding.line) == ("anchor-missing", Severity.FAILURE, 2)
    assert finding.data["repo"] == "acme/backend"
    assert "but acme/backend:docs/run.md has no anchor #run-them on acme/backend's develop" in (
        finding.message
    )
    lines = explain(ctx)
    assert "resolved: https://github.com/acme/backend/blob/develop/docs/run.md#run-it " in lines[0]
    assert lines[-1].startswith(
        "not checked: https://github.com/acme/other/blob/main/README.md#usage (the PR description)"
    )


def test_removing_a_linked_heading_fails_naming_the_link(tmp_path: Path, make_ctx) -> None:
    g = GitBuilder(tmp_path / "r").write("docs/guide.md", GUIDE)
    g.write("README.md", "# Charts\n\nRead [installing](docs/guide.md#install-the-client-chart).\n")
    g.commit("init").branch("pr")
    g.write("docs/guide.md", GUIDE.replace("## Install the `client` chart", "## Installing"))
    finding = only(run(make_ctx(g.commit("retitle"))))
    assert (finding.rule, finding.severity, finding.path, finding.line) == (
        "anchor-removed-still-linked",
        Severity.FAILURE,
        "docs/guide.md",
        3,
    )
    assert finding.data["referrers"] == ["README.md line 3"]
    assert finding.message == (
        "This PR changes the heading “Install the `client` chart” (docs/guide.md line 3 at base), "
        "so the anchor #install-the-client-chart is gone, but README.md line 3 still link to it. "
        "Update those links in this PR, or keep the anchor (an "
        '<a name="install-the-client-chart"></a> where the heading was).'
    )
