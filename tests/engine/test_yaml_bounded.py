"""YAML aliases cannot exhaust the reviewing process: bot/model/yaml/bounded.py, and the review
of a chart whose values file or rendered ResourceQuota is an alias bomb."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model.yaml import bounded
from bot.model.yaml.blocks import load_mappings
from bot.model.yaml.bounded import (
    EXPANSION_LIMIT,
    AliasBudgetError,
    anchor_names,
    load,
    load_all,
    may_alias,
)
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from checks import REGISTRY
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder


def laughs(levels: int = 9, key: str = "l") -> str:
    """The classic: each level names the previous one nine times (9**levels leaves)."""
    lines = [f"{key}0: &{key}0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        refs = ", ".join([f"*{key}{i - 1}"] * 9)
        lines.append(f"{key}{i}: &{key}{i} [{refs}]")
    return "\n".join(lines) + "\n"


def test_a_billion_laughs_is_refused_at_once_naming_the_line() -> None:
    text = laughs()
    assert len(text) < 600
    started = time.process_time()  # CPU time: what the bomb costs, whatever else the machine runs
    with pytest.raises(AliasBudgetError) as refused:
        load(text)
    assert time.process_time() - started < 0.1
    assert refused.value.problem_mark is not None and refused.value.problem_mark.line == 6
    assert f"more than {EXPANSION_LIMIT:,} nodes" in refused.value.problem


def test_a_document_that_contains_itself_is_refused() -> None:
    with pytest.raises(AliasBudgetError, match="contain itself"):
        load("a: &a\n  b: *a\n")


def test_anchors_real_files_use_parse_as_the_loader_parses_them() -> None:
    text = (
        "defaults: &defaults\n  cpu: 100m\n  memory: 64Mi\n"
        "web:\n  <<: *defaults\n  memory: 128Mi\nworker: *defaults\nlist: [*defaults, *defaults]\n"
    )
    assert load(text) == yaml.safe_load(text)
    assert load_all(text + "---\nx: 1\n") == list(yaml.safe_load_all(text + "---\nx: 1\n"))
    assert load_mappings(text) == (yaml.safe_load(text),)


def test_a_wide_but_shallow_alias_use_within_the_budget_parses() -> None:
    # 5,000 references to one 100-character string weigh ~505,000: under the budget.
    text = "s: &s " + "x" * 100 + "\nl:\n" + "".join("  - *s\n" for _ in range(5000))
    assert len(load(text)["l"]) == 5000


def bomb_repo(tmp_path: Path, path: str, text: str) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    for name, body in chart_files().items():
        g.write(name, body)
    g.commit("app 1.0.0").branch("pr").write(path, text).commit("bomb")
    return g


def review_within_a_second(g: GitBuilder) -> list[tuple[str, str | None, str]]:
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache())
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.process_time()  # CPU time, renders included: the review's own cost
    report = engine.review(ReviewInput(base="develop", head="pr")).report
    assert time.process_time() - started < 1.0
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 100 * 1024  # the bomb never expanded
    found = report.findings_for("render")
    return [(f.rule, f.path, f.message) for f in found if f.rule != "not-reviewed"]


def test_a_values_file_bomb_is_a_finding_naming_the_file(tmp_path: Path) -> None:
    g = bomb_repo(tmp_path, "app/ci/equal-values.yaml", laughs())
    ((rule, path, message),) = review_within_a_second(g)
    assert (rule, path) == ("head-fails", "app/ci/equal-values.yaml")
    assert (
        "values file app/ci/equal-values.yaml line 7: not valid YAML: its aliases expand" in message
    )


QUOTA = """apiVersion: v1
kind: ResourceQuota
metadata:
  name: quota
  annotations:
{laughs}spec:
  hard:
    requests.cpu: "1"
"""


def test_a_rendered_resource_quota_bomb_is_a_finding_naming_the_template(tmp_path: Path) -> None:
    nested = "".join(f"    {line}\n" for line in laughs(key="q").splitlines())
    g = bomb_repo(tmp_path, "app/templates/quota.yaml", QUOTA.format(laughs=nested))
    ((rule, path, message),) = review_within_a_second(g)
    assert (rule, path) == ("head-fails", "app/templates/quota.yaml")
    assert "alias" in message


def test_prose_with_ampersands_and_stars_cannot_alias() -> None:
    # A CRD's descriptions: `&` and `*` in text, no anchor. Parsed whole, such a manifest of
    # 800 KB cost ~100x its blocks in every replayed change.
    crd = (
        "spec:\n  description: provided at both the pod & container level\n"
        "  note: |\n    This is an *experimental feature*; a && b\n"
        "  cmd: sh -c 'x 2>&1' && echo *done*\n  url: http://x/?a=1&b=2\n"
    )
    assert not may_alias(crd)
    assert list(anchor_names(crd)) == []
    assert load_mappings(crd) == (yaml.safe_load(crd),)


@pytest.mark.parametrize(
    "text",
    [
        "a: &x 1\nb: *x\n",
        "&x a: 1\nb: *x\n",  # an anchored key at the margin
        "l:\n- &x 1\n- *x\n",
        "l:\n  -   &x 1\n  - *x\n",
        "? &x k\n: *x\n",
        "a: [&x 1, *x]\n",
        "a: [1,&x 2, *x]\n",
        "a: {k: &x 1, j: *x}\n",
        "a: {&x k: 1, j: *x}\n",
        "a: !!str &x 1\nb: *x\n",  # after a tag
        "a: !<tag:yaml.org,2002:str> &x 1\nb: *x\n",
        "--- &x\na: 1\n--- *x\n",
        "a:\n  &x\n  b: 1\nc: *x\n",  # on a line of its own
    ],
)
def test_every_place_an_anchor_can_stand_is_seen(text: str) -> None:
    scanned = [t.value for t in yaml.scan(text, Loader=yaml.CSafeLoader) if t.id == "<anchor>"]
    assert scanned == ["x"]
    assert may_alias(text)
    assert "x" in set(anchor_names(text))


@pytest.mark.parametrize("space", ["\t", "\r", "\x85", "\u2028", "\u2029", "\ufeff"])
def test_other_separation_or_line_breaks_are_assumed_to_alias(space: str) -> None:
    # `a:\t&x 1` is an anchor that reading lines by `\n` and ` ` would miss.
    assert may_alias(f"a:{space}&x 1\nb: *x\n")
    bomb = laughs().replace(": &", f":{space}&") if space == "\t" else laughs()
    with pytest.raises(AliasBudgetError):
        load(bomb)


# Lines with anchors wherever YAML lets a node start, among prose that holds `&` and `*`.
_BEFORE = ["", "  ", "- ", "  -   ", "? ", "k: ", "k:  ", "[", "[1, ", "[1,", "{k: ", "{"]
_BEFORE += ["!!str ", "k: !t ", "- !!map ", "--- ", "k: !<tag:x> "]
_AFTER = [" v", "", " [1]", " {a: 1}", "]", "}", " # c", ", 2]"]
_PROSE = ["pod & container", "a && b *c*", "x 2>&1", "'&a'", '"*x & y"', "|", "  * item"]


@st.composite
def _anchored_text(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            name = draw(st.sampled_from(["a", "x-1", "B_2", "9"]))
            lines.append(
                draw(st.sampled_from(_BEFORE)) + f"&{name}" + draw(st.sampled_from(_AFTER))
            )
        else:
            lines.append(draw(st.sampled_from(["k: ", "- ", "  "])) + draw(st.sampled_from(_PROSE)))
    return "\n".join(lines) + "\n*a\n"


@settings(max_examples=300, deadline=None, database=None, print_blob=True)
@given(_anchored_text())
def test_no_anchor_the_scanner_reads_is_missed(text: str) -> None:
    try:
        tokens = list(yaml.scan(text, Loader=yaml.CSafeLoader))
    except yaml.YAMLError:
        tokens = []  # a scanner error is raised by the parse alike, wherever it is parsed
    scanned = {t.value for t in tokens if t.id == "<anchor>"}
    assert scanned <= set(anchor_names(text))
    if scanned:
        assert may_alias(text)


@settings(max_examples=400, deadline=None, database=None, print_blob=True)
@given(st.text(alphabet="&& a_-:\n!*", max_size=60))
def test_anchor_names_are_found_where_the_pattern_finds_them(text: str) -> None:
    """Each `&` is found by a character search until too many were no anchor's, then by the
    pattern itself (a crafted text of `&`s): the names are the pattern's either way."""
    hits = bounded.FALSE_HITS
    expected = [m.group(1) for m in bounded._ANCHOR_RE.finditer(text)]
    try:
        for bounded.FALSE_HITS in (0, 1, 3, hits):
            assert [m.group(1) for m in bounded._anchor_matches(text)] == expected
    finally:
        bounded.FALSE_HITS = hits
