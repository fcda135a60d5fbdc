"""Chart.lock against Chart.yaml, as `helm dependency build` judges it. Helm itself is the oracle:
each lock here is written by helm-python-sdk's `dependency_update` from the chart beside it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helm_python import registry

from bot.charts.lockfile import Locked, read_lock
from bot.git.repo import GitRepo
from tests.support.gitbuilder import GitBuilder

LIBRARY = "apiVersion: v2\nname: lib\nversion: 1.2.3\n"
APP = """\
apiVersion: v2
name: app
version: 0.1.0
dependencies:
  - name: lib
    version: "~1.2.0"
    repository: file://../lib
{extra}"""
# Every field Helm hashes, with characters Go's JSON escapes and a Python dump would not.
EXTRAS = {
    "plain": "",
    "condition": "    condition: lib.enabled<&>\n",
    "tags": "    tags: [a, b]\n",
    "alias": "    alias: mylib\n",
    "enabled": "    enabled: true\n",
    "all": "    condition: a,b\n    tags: [x]\n    alias: other\n    enabled: true\n",
}


def locked_repo(tmp_path: Path, extra: str) -> GitBuilder:
    """A repository whose charts/app has the Chart.lock Helm writes for it."""
    work = tmp_path / "work"
    (work / "lib").mkdir(parents=True)
    (work / "lib" / "Chart.yaml").write_text(LIBRARY)
    (work / "app").mkdir()
    (work / "app" / "Chart.yaml").write_text(APP.format(extra=extra))
    registry.dependency_update(work / "app")
    g = GitBuilder(tmp_path / "repo")
    g.write("charts/lib/Chart.yaml", LIBRARY)
    g.write("charts/app/Chart.yaml", APP.format(extra=extra))
    g.write("charts/app/Chart.lock", (work / "app" / "Chart.lock").read_text())
    shutil.rmtree(work)
    return g.commit("locked")


@pytest.mark.parametrize("case", sorted(EXTRAS))
def test_a_lock_helm_wrote_is_in_sync(tmp_path: Path, case: str) -> None:
    g = locked_repo(tmp_path, EXTRAS[case])
    lock = read_lock(GitRepo(g.path).tree("develop"), "charts/app")
    assert lock is not None
    assert lock.in_sync, case
    assert lock.dependencies == (Locked("lib", "1.2.3", "file://../lib"),)
    assert lock.version_of("lib", "file://../lib/") == "1.2.3"


@pytest.mark.parametrize(
    "edit",
    [
        ('version: "~1.2.0"', 'version: "~1.3.0"'),  # the range moved past the locked version
        ("file://../lib", "file://../lib2"),  # another repository
        ("    alias: mylib\n", "    alias: yours\n"),  # anything Helm hashes, even an alias
    ],
)
def test_a_chart_yaml_edited_after_its_lock_is_out_of_sync(
    tmp_path: Path, edit: tuple[str, str]
) -> None:
    g = locked_repo(tmp_path, EXTRAS["alias"])
    text = (g.path / "charts/app/Chart.yaml").read_text()
    g.write("charts/app/Chart.yaml", text.replace(*edit)).commit("edit")
    lock = read_lock(GitRepo(g.path).tree("develop"), "charts/app")
    assert lock is not None and not lock.in_sync


def test_import_values_are_judged_by_what_the_lock_holds(tmp_path: Path) -> None:
    """Helm's hash of `import-values` is not reproduced: a lock that still covers every
    dependency is taken as in sync, one that does not is out of sync."""
    g = locked_repo(tmp_path, "    import-values:\n      - child: x\n        parent: y\n")
    tree = GitRepo(g.path).tree("develop")
    assert read_lock(tree, "charts/app") is not None
    assert read_lock(tree, "charts/app").in_sync  # type: ignore[union-attr]
    text = (g.path / "charts/app/Chart.yaml").read_text()
    g.write("charts/app/Chart.yaml", text.replace("~1.2.0", "~2.0.0")).commit("range")
    lock = read_lock(GitRepo(g.path).tree("develop"), "charts/app")
    assert lock is not None and not lock.in_sync


def test_no_lock_and_an_unreadable_lock(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    g.write("charts/app/Chart.yaml", APP.format(extra="")).commit("no lock")
    assert read_lock(GitRepo(g.path).tree("develop"), "charts/app") is None
    g.write("charts/app/Chart.lock", "- just\n- a list\n").commit("bad lock")
    lock = read_lock(GitRepo(g.path).tree("develop"), "charts/app")
    assert lock is not None and lock.error == (
        "charts/app/Chart.lock is not a YAML mapping Helm can read"
    )


def test_a_lock_read_again_is_the_one_read_before_until_a_file_changes(tmp_path: Path) -> None:
    g = locked_repo(tmp_path, EXTRAS["plain"])
    first = read_lock(GitRepo(g.path).tree("develop"), "charts/app")
    assert first is not None and first.in_sync
    assert read_lock(GitRepo(g.path).tree("develop"), "charts/app") is first  # by the texts
    text = (g.path / "charts/app/Chart.yaml").read_text()
    g.write("charts/app/Chart.yaml", text.replace("~1.2.0", "~1.3.0")).commit("range")
    after = read_lock(GitRepo(g.path).tree("develop"), "charts/app")  # the same Chart.lock
    assert after is not None and not after.in_sync
