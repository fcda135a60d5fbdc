"""What the rendered diff leaves out: bot/model/diff_noise.py. `alike` never calls two objects the
same where their comparable forms dump apart, and `comparable` copies only what holds noise."""

from __future__ import annotations

import copy
import datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.model.config import DiffConfig
from bot.model.diff_noise import NOT_COMPARED_VALUE, alike, comparable, fields_pattern
from bot.model.manifests import Document
from bot.model.yaml.dump import dump_lines

NOISE = DiffConfig()
UTC = datetime.UTC
EST = datetime.timezone(datetime.timedelta(hours=-5))
# Scalars that compare equal and dump apart, and keys the diff treats as noise or as text.
SCALARS = [1, 1.0, True, 0.0, -0.0, 0, False, "1", "x", None, float("nan")]
SCALARS += [datetime.datetime(2001, 12, 15, 2, 59, tzinfo=UTC)]
SCALARS += [datetime.datetime(2001, 12, 14, 21, 59, tzinfo=EST)]
KEYS = ["metadata", "labels", "annotations", "helm.sh/chart", "checksum/config", "caBundle"]
KEYS += ["a", "spec", "data", 1, "1"]


def reference_quiet(value: Any, noise: DiffConfig) -> Any:
    """The diff's noise rule, written plainly: a full copy, keys as text."""
    ignored = fields_pattern(tuple(noise.ignore_fields))
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k == "metadata" and isinstance(v, dict):
                v = dict(v)
                for field, patterns in (
                    ("labels", noise.ignore_labels),
                    ("annotations", noise.ignore_annotations),
                ):
                    entries = v.get(field)
                    if isinstance(entries, dict):
                        kept = {
                            n: x
                            for n, x in entries.items()
                            if fields_pattern(tuple(patterns)) is None
                            or not fields_pattern(tuple(patterns)).match(str(n))  # type: ignore[union-attr]
                        }
                        if kept:
                            v[field] = kept
                        else:
                            del v[field]
            elif ignored is not None and ignored.match(str(k)):
                v = NOT_COMPARED_VALUE
            out[str(k)] = reference_quiet(v, noise)
        return out
    if isinstance(value, list):
        return [reference_quiet(v, noise) for v in value]
    return value


values = st.recursive(
    st.sampled_from(SCALARS),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner),
    max_leaves=12,
)


@st.composite
def _pair(draw: st.DrawFn) -> tuple[Document, Document]:
    """Two bodies: unrelated, or the second made from the first, sharing its untouched parts."""
    a = draw(st.dictionaries(st.sampled_from(KEYS), values, min_size=1))
    way = draw(st.sampled_from(["copy", "share", "edit", "twin", "other"]))
    if way == "copy":
        b = copy.deepcopy(a)
    elif way == "twin":  # every scalar swapped for one equal to it that dumps apart
        b = _twinned(a)
    elif way == "share":
        b = dict(a)
    elif way == "edit":
        b = dict(a)
        b[draw(st.sampled_from(KEYS))] = draw(values)
    else:
        b = draw(st.dictionaries(st.sampled_from(KEYS), values, min_size=1))
    kind = draw(st.sampled_from(["ConfigMap", "Secret"]))
    return Document(kind, "x", "ns", "t.yaml", a), Document(kind, "x", "ns", "t.yaml", b)


def _twinned(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _twinned(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_twinned(v) for v in value]
    kind = type(value)
    if kind is float and value == 0.0:
        return -value
    if kind is int:
        return float(value)
    if kind is bool:
        return int(value)
    if kind is datetime.datetime:
        return value.astimezone(EST if value.tzinfo is UTC else UTC)
    return value


def shown(doc: Document) -> list[str] | None:
    body = comparable(doc, NOISE)
    try:
        return dump_lines(body) if body else []
    except TypeError:
        return None  # keys the dump cannot sort: nothing to compare by


@settings(max_examples=500, deadline=None, database=None, print_blob=True)
@given(_pair())
def test_objects_called_alike_dump_alike(pair: tuple[Document, Document]) -> None:
    a, b = pair
    if alike(a, b, NOISE):
        assert shown(a) == shown(b)


@settings(max_examples=300, deadline=None, database=None, print_blob=True)
@given(st.dictionaries(st.sampled_from(KEYS), values, min_size=1))
def test_the_comparable_object_is_the_plain_rule(body: dict[str, Any]) -> None:
    doc = Document("ConfigMap", "x", "ns", "t.yaml", body)
    before = repr(body)
    assert repr(comparable(doc, NOISE)) == repr(reference_quiet(body, NOISE))
    assert repr(body) == before  # the parsed object is shared: never changed


def test_only_what_holds_noise_is_copied() -> None:
    spec = {"template": {"spec": {"containers": [{"name": "web", "image": "x:1"}]}}}
    body = {
        "metadata": {"name": "web", "labels": {"helm.sh/chart": "web-1.0.0", "app": "web"}},
        "spec": spec,
    }
    shown = comparable(Document("Deployment", "web", "ns", "t.yaml", body), NOISE)
    assert shown is not None
    assert shown["spec"] is spec  # nothing to leave out: the very object, not a copy
    assert shown["metadata"] == {"name": "web", "labels": {"app": "web"}}


def test_a_schema_naming_metadata_is_not_copied() -> None:
    # A CRD's schema names `metadata` in many places, with no labels: nothing to leave out there,
    # so the schema is the parsed object itself (the dump remembers it by identity).
    schema = {"properties": {"metadata": {"type": "object"}, "spec": {"type": "object"}}}
    body = {"metadata": {"name": "crd", "labels": {"app": "x"}}, "spec": {"schema": schema}}
    shown = comparable(Document("CustomResourceDefinition", "crd", "", "c.yaml", body), NOISE)
    assert shown is body
    empty = {"metadata": {"name": "x", "labels": {}, "annotations": {"a": "1"}}}
    shown = comparable(Document("ConfigMap", "x", "ns", "t.yaml", empty), NOISE)
    assert shown == {"metadata": {"name": "x", "annotations": {"a": "1"}}}  # `labels: {}` dropped


def test_a_version_bump_is_alike_and_a_real_change_is_not() -> None:
    def deployment(chart: str, image: str) -> Document:
        labels = {"helm.sh/chart": chart, "app": "web"}
        body = {"metadata": {"name": "web", "labels": labels}, "spec": {"image": image}}
        return Document("Deployment", "web", "ns", "t.yaml", body)

    assert alike(deployment("web-1.0.0", "x:1"), deployment("web-1.0.1", "x:1"), NOISE)
    assert not alike(deployment("web-1.0.0", "x:1"), deployment("web-1.0.1", "x:2"), NOISE)
    for one, other in ((0.0, -0.0), (1, 1.0), (1, True), tuple(SCALARS[-2:])):
        a, b = ({"metadata": {"name": "x"}, "v": [v]} for v in (one, other))
        assert one == other and not alike(
            Document("ConfigMap", "x", "ns", "t.yaml", a),
            Document("ConfigMap", "x", "ns", "t.yaml", b),
            NOISE,
        )
    # `metadata` a mapping on one side only, in a repository that ignores a field of that name.
    ignoring = DiffConfig(ignore_fields=["metadata"])
    docs = [Document("X", "x", "ns", "t.yaml", {"a": {"metadata": m}}) for m in ({"n": 1}, "n")]
    assert not alike(*docs, ignoring)
    secret = {"data": {"password": "a"}, "metadata": {"name": "s"}}
    other = {"data": {"password": "b"}, "metadata": {"name": "s"}}
    assert alike(*(Document("Secret", "s", "ns", "t.yaml", b) for b in (secret, other)), NOISE)
    assert not alike(
        Document("Secret", "s", "ns", "t.yaml", secret),
        Document("Secret", "s", "ns", "t.yaml", {**secret, "data": {"token": "a"}}),
        NOISE,
    )
