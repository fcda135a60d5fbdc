"""`chart-review qos`: the parser this module adds, and its run() on files and stdin."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import qos as qos_cli
from tests.support.paths import ROOT

MANIFESTS = """# Source: app/templates/web.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: web
          resources: {limits: {cpu: 250m, memory: 64Mi}}
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: backup
  namespace: ops
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
            - name: backup
              resources: {requests: {cpu: "0.25"}}
---
apiVersion: v1
kind: Service
metadata:
  name: web
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chart-review")
    qos_cli.add_parser(parser.add_subparsers(dest="command", required=True))
    return parser


def _run(argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    args = _parser().parse_args(["qos", *argv])
    out, err = io.StringIO(), io.StringIO()
    code = args.func(args, stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_text_output_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "all.yaml"
    path.write_text(MANIFESTS)
    assert _run([str(path)]) == (
        0,
        "Deployment/default/web\tGuaranteed\nCronJob/ops/backup\tBurstable\n",
        "",
    )


def test_json_output_from_stdin_with_a_namespace() -> None:
    code, out, err = _run(["--format", "json", "--namespace", "tracebloc"], stdin=MANIFESTS)
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "Deployment/tracebloc/web": "Guaranteed",
        "CronJob/ops/backup": "Burstable",
    }


def test_several_files_and_dash_for_stdin(tmp_path: Path) -> None:
    path = tmp_path / "one.yaml"
    path.write_text(MANIFESTS.split("---")[0])
    code, out, _ = _run(
        [str(path), "-"], stdin="kind: Pod\nmetadata: {name: p}\nspec: {containers: [{}]}\n"
    )
    assert (code, out) == (0, "Deployment/default/web\tGuaranteed\nPod/default/p\tBestEffort\n")


def test_unreadable_yaml_exits_2_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("kind: Pod\nmetadata: {name: [\n")
    code, out, err = _run([str(path)])
    assert (code, out) == (2, "")
    assert err.startswith(f"chart-review: error: {path} line 3: rendered output is not valid YAML")
    assert err.count("\n") == 1


def test_missing_file_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    assert _run([str(path)]) == (
        2,
        "",
        f"chart-review: error: {path}: cannot read: No such file or directory\n",
    )


def test_bad_stdin_is_named_stdin() -> None:
    code, _, err = _run([], stdin="a: [\n")
    assert code == 2 and err.startswith("chart-review: error: <stdin> line 2:")


def test_format_choice_is_validated() -> None:
    with pytest.raises(SystemExit):
        _parser().parse_args(["qos", "--format", "xml"])


def test_run_uses_the_process_streams(tmp_path: Path) -> None:
    path = tmp_path / "all.yaml"
    path.write_text(MANIFESTS)
    script = (
        "import argparse, sys; from bot.cli import qos as qos_cli; "
        "p = argparse.ArgumentParser(); qos_cli.add_parser(p.add_subparsers()); "
        "a = p.parse_args(sys.argv[1:]); sys.exit(a.func(a))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "qos", "--format", "json"],
        input=MANIFESTS,
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert (done.returncode, json.loads(done.stdout)) == (
        0,
        {"Deployment/default/web": "Guaranteed", "CronJob/ops/backup": "Burstable"},
    )
