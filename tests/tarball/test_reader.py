"""The bounded archive reader: it stops at each cap, counting what it read, holds nothing it is done
with, and sees an archive's files as Helm's loader does (Helm itself is the oracle here)."""

from __future__ import annotations

import json
import tarfile
import tracemalloc
from pathlib import Path

import helm_python
import pytest

from bot.charts.schemas import archive_escape, archive_verdict
from bot.tarball.headers import Unreadable
from bot.tarball.limits import LIMITS, MIB, ArchiveLimits
from bot.tarball.reader import Budget, OverCap, members
from tests.support.chart_repo import ChartSpec, package_chart
from tests.support.tarballs import BLOCK, CHART_YAML, empty_members, header, raw_tgz, subchart, tgz

SKIP_CHUNK = 1 << 20  # the most one read asks of the gzip stream
ESCAPE = json.dumps({"$ref": "file:///etc/passwd"})
WHY = '"$ref": "file:///etc/passwd" names a document outside the schema'
CHART = {"c/Chart.yaml": CHART_YAML.format(name="c", version="1.0.0")}
CHART_MEMBER = (header("c/Chart.yaml", len(CHART["c/Chart.yaml"])), CHART["c/Chart.yaml"].encode())


def read_all(data: bytes, budget: Budget) -> int:
    return sum(1 for _ in members(data, budget=budget))


def test_empty_members_past_the_cap_stop_at_it() -> None:
    data = empty_members(LIMITS.members + 5_000)
    budget = Budget()
    with pytest.raises(OverCap, match=r"^more than 20,000 members, the most the review reads of"):
        read_all(data, budget)
    assert budget.members == LIMITS.members + 1  # one header past the cap, not one more
    assert budget.decompressed_bytes == (LIMITS.members + 1) * BLOCK
    assert archive_verdict(data).cost == budget.cost


def test_reading_holds_no_member_it_is_done_with() -> None:
    data = empty_members(LIMITS.members)  # at the cap: read to the end
    tracemalloc.start()
    try:
        count = read_all(data, Budget())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == LIMITS.members
    assert peak < 1 * MIB  # Python's tarfile keeps every member: ~9 MB for these


def test_decompressed_bytes_stop_at_their_cap() -> None:
    limits = ArchiveLimits(decompressed_bytes=1 * MIB)
    data = tgz({**CHART, "c/big.bin": bytes(3 * MIB)})
    budget = Budget(limits)
    with pytest.raises(OverCap, match=r"^more than 1 MiB unpacked, the most the review reads"):
        read_all(data, budget)
    assert limits.decompressed_bytes < budget.decompressed_bytes <= 2 * MIB  # asked, not read


def test_files_past_helms_own_limit_are_refused() -> None:
    data = tgz({**CHART, "c/a.bin": bytes(600_000), "c/b.bin": bytes(600_000)})
    with pytest.raises(OverCap, match=r"files of more than 1 MiB together, Helm's own limit"):
        read_all(data, Budget(ArchiveLimits(file_bytes=1 * MIB)))


def test_header_bytes_stop_at_their_cap() -> None:
    names = {f"c/{letter * 600_000}": "" for letter in "ab"}  # PAX records of 600 KB each
    data = tgz({**CHART, **names}, format=tarfile.PAX_FORMAT)
    budget = Budget(ArchiveLimits(header_bytes=1 * MIB))
    with pytest.raises(OverCap, match=r"^more than 1 MiB of headers"):
        read_all(data, budget)
    assert budget.header_bytes <= 2 * 600_000 + 8 * BLOCK


def test_an_extended_header_past_gos_limit_is_refused_as_helm_refuses_it() -> None:
    data = tgz({**CHART, f"c/{'x' * (LIMITS.special_bytes + 10)}": ""}, format=tarfile.PAX_FORMAT)
    with pytest.raises(Unreadable, match=r"an extended header of 1,048,6\d\d bytes, more than the"):
        read_all(data, Budget())
    with pytest.raises(helm_python.HelmError):
        helm_python.Chart.load_archive(data)


def test_members_of_nested_archives_count_with_the_outer_ones() -> None:
    inner = subchart("sub", extra={f"templates/t{i}.yaml": "" for i in range(8)})
    data = tgz({**CHART, "c/charts/sub-1.0.0.tgz": inner})
    budget = Budget(ArchiveLimits(members=10))
    with pytest.raises(OverCap, match=r"^more than 10 members"):
        read_all(data, budget)
    assert budget.members == 11


def test_archives_nested_past_the_depth_cap_are_refused() -> None:
    deepest = subchart("b")
    middle = tgz(
        {"a/Chart.yaml": CHART_YAML.format(name="a", version="1"), "a/charts/b.tgz": deepest}
    )
    data = tgz({**CHART, "c/charts/a.tgz": middle})
    assert read_all(data, Budget(ArchiveLimits(depth=2))) == 6
    with pytest.raises(OverCap, match=r"^c/charts/a.tgz › a/charts/b.tgz: archives nested more"):
        read_all(data, Budget(ArchiveLimits(depth=1)))


def test_a_schema_in_a_nested_archive_is_found() -> None:
    inner = subchart("sub", extra={"values.schema.json": ESCAPE})
    data = tgz({**CHART, "c/charts/sub-1.0.0.tgz": inner})
    assert archive_escape(data) == f"c/charts/sub-1.0.0.tgz › sub/values.schema.json: {WHY}"


# Each archive names its schema as Go's tar reader and Helm's loader read it, and as Python's
# tarfile (what the pre-check read before) does not.
HIDDEN = {
    # A global PAX header: Python's tarfile renames every member after it; Go renames none.
    "global-pax-path": tgz(
        {**CHART, "c/values.schema.json": ESCAPE},
        format=tarfile.PAX_FORMAT,
        pax_headers={"path": "c/README.md"},
    ),
    # A trailing slash on a file: Helm cleans the path to `values.schema.json`.
    "trailing-slash": raw_tgz(
        CHART_MEMBER,
        (header("c/values.schema.json/", len(ESCAPE)), ESCAPE.encode()),
    ),
    # A Windows name: Helm splits on the backslash.
    "backslash": tgz({**CHART, "c\\values.schema.json": ESCAPE}),
    # A byte order mark, which Helm drops and Python's json refuses.
    "byte-order-mark": tgz({**CHART, "c/values.schema.json": "\ufeff" + ESCAPE}),
}


@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_a_schema_named_as_helm_reads_names_is_found(name: str) -> None:
    data = HIDDEN[name]
    with helm_python.Chart.load_archive(data) as chart:
        assert chart.schema == json.loads(ESCAPE)  # Helm loads it, and would follow the $ref
    why = archive_escape(data)
    assert why is not None and why.endswith(WHY)


def test_a_sparse_member_is_refused() -> None:
    data = raw_tgz(CHART_MEMBER)
    sparse = raw_tgz((header("c/values.schema.json", 10, typeflag=b"S"), bytes(10)))
    assert read_all(data, Budget()) == 1
    assert archive_escape(sparse) == (
        "not a chart archive Helm can read (c/values.schema.json: a sparse file, which no chart "
        "holds)"
    )


def test_what_helm_cannot_read_is_refused_naming_why() -> None:
    whole = subchart("sub")
    assert archive_escape(b"version https://git-lfs.github.com/spec/v1\n") == (
        "not a chart archive Helm can read (not gzip-compressed)"
    )
    cut = archive_escape(whole[: len(whole) // 2])
    assert cut is not None and cut.startswith("not a chart archive Helm can read (truncated")
    nested = tgz({**CHART, "c/charts/sub-1.0.0.tgz": b"not gzip"})
    assert archive_escape(nested) == (
        "not a chart archive Helm can read (c/charts/sub-1.0.0.tgz: not gzip-compressed)"
    )


def test_a_packaged_chart_reads_as_the_files_helm_loads(tmp_path: Path) -> None:
    spec = ChartSpec(
        "app",
        "1.2.3",
        templates={"deployment.yaml": "kind: Deployment\n", "_helpers.tpl": ""},
        files={"README.md": "# app\n", "crds/crd.yaml": "kind: CustomResourceDefinition\n"},
    )
    data = package_chart(spec, tmp_path / "out", tmp_path / "src").read_bytes()
    with helm_python.Chart.load_archive(data) as chart:
        loaded = {f["name"] for f in chart.templates + chart.files}
    read = {m.path for m in members(data)}
    assert read - {"Chart.yaml", "values.yaml"} == loaded
    assert archive_escape(data) is None


def test_a_schema_too_large_to_inspect_is_refused_unread() -> None:
    data = tgz({**CHART, "c/values.schema.json": " " * (LIMITS.held_bytes + 1)})
    assert archive_escape(data) == "c/values.schema.json is larger than 5 MiB"
