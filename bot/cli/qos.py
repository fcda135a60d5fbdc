"""`chart-review qos [FILE...]`: the QoS class of every pod in rendered manifests.

Reads multi-document YAML (e.g. `helm template` output) from the files, or stdin when none is
given, and prints `Kind/namespace/name<TAB>Class` per pod, or a JSON object with `--format json`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from bot.errors import ChartReviewError
from bot.model.manifests import Document, ManifestError, documents_from_text
from checks.qos.check import classify

PROG = "chart-review"
STDIN_NAME = "<stdin>"
DEFAULT_NAMESPACE = "default"
EXIT_OK, EXIT_ERROR = 0, 2
HELP = "print the Kubernetes QoS class of every pod in rendered manifests"
DESCRIPTION = (
    "Read rendered manifests (multi-document YAML; stdin when no FILE is given) and print the QoS "
    "class the kubelet gives each pod-carrying workload, keyed Kind/namespace/name."
)
UNREADABLE = "{source}: cannot read: {reason}"


class InputError(ChartReviewError):
    """An input the command cannot use; the message names the file."""


def add_parser(subparsers: Any) -> None:
    """Register `qos` on the CLI's subparsers (argparse `_SubParsersAction`)."""
    parser = subparsers.add_parser("qos", help=HELP, description=DESCRIPTION)
    parser.add_argument(
        "files", nargs="*", metavar="FILE", help="rendered manifests (default: stdin)"
    )
    parser.add_argument(
        "--format",
        choices=["text", "json"],
        default="text",
        help="a line per workload, or a JSON object of workload to class",
    )
    parser.add_argument(
        "--namespace",
        default=DEFAULT_NAMESPACE,
        help=f"namespace of objects that name none (default: {DEFAULT_NAMESPACE})",
    )
    parser.set_defaults(func=run)


def run(
    args: argparse.Namespace,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    out, err = stdout or sys.stdout, stderr or sys.stderr
    try:
        docs = read_documents(args.files, args.namespace, stdin or sys.stdin)
    except InputError as exc:
        print(f"{PROG}: error: {exc}", file=err)
        return EXIT_ERROR
    classes = classify(docs)
    out.write(format_classes(classes, args.format))
    return EXIT_OK


def read_documents(files: Sequence[str], namespace: str, stdin: TextIO) -> list[Document]:
    docs: list[Document] = []
    for source in files or [STDIN_NAME]:
        from_stdin = source in (STDIN_NAME, "-")
        text = stdin.read() if from_stdin else _read(source)
        try:
            docs += documents_from_text(text, STDIN_NAME if from_stdin else source, namespace)
        except ManifestError as exc:
            raise InputError(str(exc)) from None
    return docs


def format_classes(classes: dict[str, str], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(classes, indent=2) + "\n"
    return "".join(f"{key}\t{cls}\n" for key, cls in classes.items())


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(UNREADABLE.format(source=path, reason=reason)) from None
