"""A `helm` executable for the tests of `--renderer helm`, since no helm binary can be installed
here: Helm's own Go SDK (helm-python-sdk) behind the two subcommands chart-review calls, with
helm's output conventions (`# Source:` headers, `Error: ` and exit 1 on failure)."""

import argparse
import json
import sys
from pathlib import Path

import helm_python
import yaml


def main() -> int:
    if sys.argv[1:3] == ["version", "--short"]:
        print(f"v4-sdk+{helm_python.__version__}")
        return 0
    parser = argparse.ArgumentParser(prog="helm")
    parser.add_argument("command", choices=["template"])
    parser.add_argument("release")
    parser.add_argument("chart")
    parser.add_argument("-n", "--namespace", default="default")
    parser.add_argument("-f", "--values", action="append", default=[])
    parser.add_argument("--kube-version")
    parser.add_argument("--api-versions", action="append", default=[])
    args = parser.parse_args()
    values: dict = {}
    for path in args.values:
        values.update(yaml.safe_load(Path(path).read_text()) or {})
    try:
        with helm_python.Chart.load_archive(Path(args.chart).read_bytes()) as chart:
            refusal = kube_version_refusal(chart.metadata, args.kube_version)
            if refusal:
                print(f"Error: {refusal}", file=sys.stderr)
                return 1
            rendered = render(chart, values, args)
    except helm_python.HelmError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    for name in sorted(rendered):
        if name.endswith("NOTES.txt") or not rendered[name].strip():
            continue
        print(f"---\n# Source: {name}\n{rendered[name].strip()}")
    return 0


def render(chart: object, values: dict, args: argparse.Namespace) -> dict[str, str]:
    """`helm template`'s render; with --kube-version / --api-versions, the SDK's render call that
    takes them (its `Chart.render` does not)."""
    if not args.kube_version and not args.api_versions:
        return chart.render(  # type: ignore[attr-defined, no-any-return]
            values=values, name=args.release, namespace=args.namespace, is_install=True
        )
    opts: dict = {"name": args.release, "namespace": args.namespace, "is_install": True}
    if args.kube_version:
        opts["kube_version"] = args.kube_version
    if args.api_versions:
        opts["api_versions"] = [v for arg in args.api_versions for v in arg.split(",") if v]
    out = helm_python._native.call_string(
        "helm_render",
        chart._raw(),
        json.dumps(values),
        json.dumps(opts),  # type: ignore[attr-defined]
    )
    return json.loads(out)  # type: ignore[no-any-return]


def kube_version_refusal(metadata: dict, kube_version: str | None) -> str | None:
    """What helm says of a chart whose `kubeVersion` excludes the version it renders for (only
    checked here when one is given: the SDK's default is what the embedded renderer checks)."""
    from bot.kube.constraint import satisfies

    constraint = metadata.get("kubeVersion")
    if not constraint or not kube_version or satisfies(kube_version, constraint):
        return None
    return (
        f"chart requires kubeVersion: {constraint} which is incompatible with Kubernetes "
        f"{kube_version}"
    )


if __name__ == "__main__":
    sys.exit(main())
