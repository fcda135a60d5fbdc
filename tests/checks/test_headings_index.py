"""The index the `headings` check narrows its referrer search with (checks/headings/index.py): never
narrower than the check's own prefilters, the same whether a tree is indexed from scratch or from
the tree beside it, kept by tree id within its bound, and the check's findings the same either way."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from bot.git.repo import GitRepo
from bot.git.tree import GitTree
from bot.lru import BoundedCache
from checks.headings.check import review, run
from checks.headings.files import heading_pattern
from checks.headings.index import READ_BATCH, TreeIndex, build_index, tree_index
from tests.checks import test_headings
from tests.checks.test_headings import only
from tests.support.gitbuilder import GitBuilder
from tests.support.memos import ColdMemos
from tests.support.qos import DictTree

# The real-git context of tests/checks/test_headings.py, shared.
repos = test_headings.repos
make_ctx = test_headings.make_ctx

HEADING = "ROLLBACK ON THE DEGRADED PATH"
JOB = f"# {HEADING} — decided in review.\nkind: Job\n"
OPS = f"# Ops\n\n## Restore\n\nSee {HEADING} in job.yaml.\n"
GUIDE = "# Guide\n\n## Install\n\nText.\n"


def docs_repo(path: Path, pages: int = 20) -> GitBuilder:
    """A chart file with an ALL-CAPS heading, a page that quotes it, a guide others link, and many
    pages that neither quote nor link anything."""
    g = GitBuilder(path).write("job.yaml", JOB).write("docs/ops.md", OPS)
    g.write("docs/guide.md", GUIDE)
    g.write("README.md", "# Charts\n\nRead [the install](docs/guide.md#install).\n")
    g.write("docs/data.txt", "See [guide](guide.md#install).\n")
    for n in range(pages):
        g.write(f"docs/page{n}.md", f"# Page {n}\n\n## Notes\n\nNothing here.\n")
    return g.commit("init")


def test_an_index_made_from_the_tree_beside_equals_one_built_from_scratch(tmp_path: Path) -> None:
    g = docs_repo(tmp_path / "r").branch("pr")
    g.write("docs/ops.md", OPS.replace("ROLLBACK", "ROLL BACK"))  # a quote reworded
    g.write("job.yaml", JOB.replace("DEGRADED", "SLOW"))  # a heading reworded
    g.remove("docs/page3.md")  # a file deleted
    g.run_git("mv", "docs/page4.md", "docs/moved.md")  # renamed
    g.write("docs/new.md", "# New\n\nSee [guide](guide.md#install).\n")  # added, with a link
    g.write("docs/data.txt", "x\0y")  # text turned binary: read no more
    g.write("docs/page5.md", "# Page 5\n\nRead [the install](guide.md#INSTALL).\n")  # link added
    g.commit("change")
    repo = GitRepo(g.path)
    base, head = repo.tree(g.sha("develop")), repo.tree(g.sha("pr"))
    changes = repo.changes(base.commit, head.commit)
    kept: BoundedCache[str, TreeIndex] = BoundedCache(10_000, lambda i: i.weight)
    before = tree_index(base, kept=kept)
    derived = tree_index(head, base, changes, kept=kept)
    assert derived == build_index(head)
    assert derived.may_link(["install"]) == {"README.md", "docs/new.md", "docs/page5.md"}
    assert before.may_link(["install"]) == {"README.md", "docs/data.txt"}
    assert before.may_quote([HEADING]) == {"job.yaml", "docs/ops.md"}
    assert derived.may_quote([HEADING]) == frozenset()
    assert derived.may_quote(["ROLLBACK ON THE SLOW PATH"]) == {"job.yaml"}
    repo.close()


def test_an_index_names_every_file_the_checks_prefilters_accept() -> None:
    """Whatever stands around the words (punctuation, another script, a no-break space, a code
    span), a file that the quote search's regex or the link search's substring test accepts is
    among those the index names; a file with neither is not."""
    headings = [HEADING, "Install `helm` Chart", "ÜBER UPGRADE NOTES", "配置 說明", "v1.2 Notes"]
    anchors = ["install", "v12-notes", "über-upgrade-notes", "配置-說明", "kube.x", "-x"]
    files = {
        "punctuated.md": f"“{HEADING}.” in job.yaml",
        "non-ascii-around.md": f"É{HEADING}É and #INSTALLATION",
        "no-break-space.yaml": "# ROLLBACK\u00a0ON THE DEGRADED\u00a0PATH",
        "code.md": "Install `helm` Chart, see [x](a.md#Install-Helm)",
        "umlaut.md": "see ÜBER UPGRADE NOTES and b.md#Über-Upgrade-Notes",
        "cjk.md": "配置 說明 and #配置-說明",
        "dotted.md": 'v1.2 Notes <a name="kube.x"> [k](#\u212aube.x) [d](#-x)',
        "nothing.md": "Plain prose, no quote and no link.",
    }
    index = build_index(DictTree(files))
    for path, text in files.items():
        for heading in headings:
            if heading_pattern([heading]).search(text):
                assert path in index.may_quote([heading]), (path, heading)
        for anchor in anchors:
            if "#" + anchor in text.lower():
                assert path in index.may_link([anchor]), (path, anchor)
    assert "nothing.md" not in index.may_quote([HEADING]) | index.may_link(["install"])
    assert index.may_quote(["配置 說明"]) == set(files)  # no ASCII word to narrow by


def test_a_diff_that_misses_an_added_file_is_not_trusted(
    tmp_path: Path, cold_memos: ColdMemos
) -> None:
    g = docs_repo(tmp_path / "r").branch("pr")
    g.write("docs/new.md", "See [guide](guide.md#install).\n").commit("add")
    repo = GitRepo(g.path)
    base, head = repo.tree(g.sha("develop")), repo.tree(g.sha("pr"))
    cold_memos()
    tree_index(base)
    assert "docs/new.md" in tree_index(head, base, ()).may_link(["install"])
    repo.close()


def test_an_index_is_kept_by_tree_id_for_the_next_review(
    tmp_path: Path, cold_memos: ColdMemos
) -> None:
    g = docs_repo(tmp_path / "r")
    first, second = GitRepo(g.path), GitRepo(g.path)
    cold_memos()
    kept = tree_index(first.tree(g.sha()))
    assert tree_index(second.tree(g.sha())) is kept
    first.close()
    second.close()


def test_the_kept_indexes_stay_within_their_weight(tmp_path: Path) -> None:
    """The oldest index goes once the facts kept would pass the bound; asked again, it is built
    again, equal."""
    g = docs_repo(tmp_path / "r", pages=5)
    shas = [g.sha()]
    for n in range(2):
        shas.append(g.write(f"docs/more{n}.md", f"# More {n}\n").commit(f"more {n}").sha())
    repo = GitRepo(g.path)
    weights = [build_index(repo.tree(sha)).weight for sha in shas]
    kept: BoundedCache[str, TreeIndex] = BoundedCache(weights[1] + weights[2], lambda i: i.weight)
    first = tree_index(repo.tree(shas[0]), kept=kept)
    for sha in shas[1:]:
        tree_index(repo.tree(sha), kept=kept)
    assert len(kept) == 2
    assert tree_index(repo.tree(shas[2]), kept=kept) is tree_index(repo.tree(shas[2]), kept=kept)
    again = tree_index(repo.tree(shas[0]), kept=kept)
    assert again == first and again is not first
    repo.close()


def test_a_tree_without_an_id_is_indexed_and_remembered_by_identity() -> None:
    tree = DictTree({"a.md": "See [x](b.md#install).\n", "b.md": GUIDE, "bin": "x\0y"})
    index = tree_index(tree)
    assert index.may_link(["install"]) == {"a.md"}
    assert set(index.files) == {"a.md", "b.md"}
    assert tree_index(tree) is index


class BatchTree(DictTree):
    """A tree that reads many files in one request, as a git tree can: the index asks in batches."""

    def __init__(self, files: dict[str, str]) -> None:
        super().__init__(files)
        self.batches: list[int] = []

    def read_many(self, paths: Sequence[str]) -> list[bytes | None]:
        self.batches.append(len(paths))
        return [self.read(p) for p in paths]


def test_a_tree_that_reads_many_files_at_once_is_indexed_in_batches() -> None:
    files = {f"docs/p{n}.md": f"# P{n}\n\nSee [g](g.md#install) {n}.\n" for n in range(600)}
    files["docs/bin"] = "x\0y"
    tree = BatchTree(files)
    index = build_index(tree)
    assert index == build_index(DictTree(files))
    assert tree.batches == [READ_BATCH, READ_BATCH, 601 - 2 * READ_BATCH]
    assert len(index.may_link(["install"])) == 600


def test_a_removed_quoted_heading_fails_with_a_cold_or_a_kept_index(
    tmp_path: Path, make_ctx, cold_memos: ColdMemos
) -> None:
    g = docs_repo(tmp_path / "r").branch("pr")
    g.write("job.yaml", JOB.replace(HEADING, "ROLL BACK SLOWLY")).commit("reword")
    cold_memos()
    cold = run(make_ctx(g))
    warm = run(make_ctx(g))
    assert cold == warm
    finding = only(cold)
    assert (finding.rule, finding.data["referrers"]) == (
        "removed-still-quoted",
        ["docs/ops.md line 5"],
    )


def test_a_second_pr_on_the_same_develop_still_finds_old_referrers(
    tmp_path: Path, make_ctx, cold_memos: ColdMemos
) -> None:
    """The second PR's head is indexed from develop's kept index: the files it does not touch are
    taken from there, and still found."""
    g = docs_repo(tmp_path / "r").branch("first")
    g.write("job.yaml", JOB.replace(HEADING, "ROLL BACK")).commit("one")
    g.checkout("develop").branch("pr")
    g.write("docs/guide.md", GUIDE.replace("## Install", "## Installing")).commit("retitle")
    cold_memos()
    assert only(run(make_ctx(g, head="first"))).rule == "removed-still-quoted"
    outcome = review(make_ctx(g, head="pr"))
    finding = only(list(outcome.findings))
    assert (finding.rule, finding.data["referrers"]) == (
        "anchor-removed-still-linked",
        ["README.md line 3"],
    )


def test_a_tree_with_no_index_beside_it_is_indexed_from_its_repositorys_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cold_memos: ColdMemos
) -> None:
    """A replay's next base, develop after a few merges: the repository's last index and the paths
    git says differ make it, reading those files alone, equal to one built from scratch."""
    g = docs_repo(tmp_path / "r")
    first = g.sha()
    g.write("docs/ops.md", OPS.replace("ROLLBACK", "ROLL BACK")).remove("docs/page3.md")
    g.run_git("mv", "docs/page4.md", "docs/moved.md")
    g.write("docs/data.txt", "x\0y").commit("two")
    g.write("docs/new.md", "# New\n\nSee [guide](guide.md#install).\n").commit("three")
    repo = GitRepo(g.path)
    cold_memos()
    kept: BoundedCache[str, TreeIndex] = BoundedCache(100_000, lambda i: i.weight)
    tree_index(repo.tree(first), kept=kept)
    read: list[str] = []
    real = GitTree.read_many
    monkeypatch.setattr(GitTree, "read_many", lambda t, paths: read.extend(paths) or real(t, paths))
    later = tree_index(repo.tree(g.sha()), kept=kept)
    assert sorted(read) == ["docs/data.txt", "docs/moved.md", "docs/new.md", "docs/ops.md"] + [
        "docs/page3.md",  # gone: looked for, found absent
        "docs/page4.md",
    ]
    monkeypatch.undo()
    assert later == build_index(repo.tree(g.sha()))
    assert later.may_quote([HEADING]) == {"job.yaml"}
    assert later.may_link(["install"]) == {"README.md", "docs/new.md"}
    # Another repository's tree is not made from this one's index: built whole.
    other = docs_repo(tmp_path / "other", pages=2)
    read.clear()
    monkeypatch.setattr(GitTree, "read_many", lambda t, paths: read.extend(paths) or real(t, paths))
    tree_index(GitRepo(other.path).tree(other.sha()), kept=kept)
    assert len(read) == len(GitRepo(other.path).tree(other.sha()).paths())
    repo.close()
