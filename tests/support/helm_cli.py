"""A `helm` executable for the tests of `--renderer helm`, since no helm binary can be installed
here: Helm's own Go SDK (helm-python-sdk) behind the two subcommands chart-review calls, with
helm's output conventions (`# Source:` headers, `Error: ` and exit 1 on failure)."""

import argparse
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
    args = parser.parse_args()
    values: dict = {}
    for path in args.values:
        values.update(yaml.safe_load(Path(path).read_text()) or {})
    try:
        with helm_python.Chart.load_archive(Path(args.chart).read_bytes()) as chart:
            rendered = chart.render(
                values=values, name=args.release, namespace=args.namespace, is_install=True
            )
    except helm_python.HelmError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    for name in sorted(rendered):
        if name.endswith("NOTES.txt") or not rendered[name].strip():
            continue
        print(f"---\n# Source: {name}\n{rendered[name].strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
