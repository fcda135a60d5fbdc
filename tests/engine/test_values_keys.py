"""The keys a PR changed in a values file, with their head lines, and the markers that follow them
into a render (bot/model/values_keys.py, bot/charts/values_marks.py)."""

from __future__ import annotations

from bot.charts.values_marks import landed, marker, overlay
from bot.model.values_keys import ABSENT, MAX_KEYS, changed_keys

BASE = """\
image:
  tag: "1.0"
resources:
  requests: {cpu: 100m, memory: 128Mi}
  limits: {cpu: 100m, memory: 128Mi}
args: [--a]
enabled: true
"""


def keys(head: str, base: str | None = BASE) -> list[tuple[str, int, str]]:
    return [(k.dotted, k.line, k.text) for k in changed_keys("v.yaml", base, head)]


def test_a_scalar_an_emptied_mapping_and_a_list_are_each_one_key_at_its_head_line() -> None:
    head = BASE.replace('"1.0"', '"1.1"').replace(
        "resources:\n  requests: {cpu: 100m, memory: 128Mi}\n  limits: {cpu: 100m, memory: 128Mi}\n",
        "resources: {}\n",
    )
    head = head.replace("[--a]", "[--a, --b]")
    assert keys(head) == [
        ("image.tag", 2, 'tag: "1.1"'),
        ("resources", 3, "resources: {}"),
        ("args", 4, "args: [--a, --b]"),
    ]


def test_a_mapping_that_only_lost_keys_is_the_change_and_a_new_key_has_no_base() -> None:
    head = BASE.replace("  limits: {cpu: 100m, memory: 128Mi}\n", "") + "extra: {a: 1}\n"
    [resources, extra] = changed_keys("v.yaml", BASE, head)
    assert (resources.dotted, resources.line, extra.dotted, extra.line) == (
        "resources",
        3,
        "extra",
        7,
    )
    assert extra.base is ABSENT


def test_a_new_file_changes_every_key_and_bad_yaml_changes_none() -> None:
    assert [k[0] for k in keys("a: 1\nb: {c: 2}\n", base=None)] == ["a", "b"]
    assert keys("a: [\n") == []
    assert keys("- a\n") == []  # not a mapping: the render says so


def test_an_alias_is_read_at_its_anchor_and_the_walk_is_bounded() -> None:
    head = "base: &b {cpu: 1}\nother: *b\n"
    assert [k[0] for k in keys(head, base="base: {cpu: 2}\n")] == ["base.cpu", "other"]
    wide = "".join(f"k{n}: {n}\n" for n in range(MAX_KEYS + 1))
    assert keys(wide, base="{}\n") == []  # past the cap: nothing read, the template line stays


def test_markers_follow_each_markable_key_into_a_rendered_field() -> None:
    head = BASE.replace('"1.0"', '"1.1"').replace("enabled: true", "enabled: false")
    head = head.replace("[--a]", "[--a, --b]")
    found = changed_keys("v.yaml", BASE, head)
    marks, meant = overlay(found)
    # A boolean is no marker; the string and the list carry theirs.
    assert [k.dotted for k in meant.values()] == ["image.tag", "args"]
    assert marks == {"image": {"tag": marker(1)}, "args": ["--a", "--b", marker(2)]}
    rendered = {"image": f"example/app:{marker(1)}", "args": ["--a", "--b", marker(2)]}
    assert [k.dotted for k in landed(rendered["image"], meant)] == ["image.tag"]
    assert [k.dotted for k in landed(rendered, meant)] == ["image.tag", "args"]
