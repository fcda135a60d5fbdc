"""A wheelhouse for installing this project with no index: every distribution its runtime needs,
and its build backend, repacked as wheels from the environment the tests run in (the files each
one's RECORD lists, under its own dist-info). The network is never asked: a test installs with
`--no-index --find-links` this directory, as a runner would install from PyPI."""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

PROJECT = "chart-review-bot"
BUILD_BACKEND = "setuptools"
# The project's `[build-system] requires`: pip builds it in an environment of its own.
BUILD_BACKEND_MIN = Version("77")
# What an installer writes beside a distribution, never part of the wheel it came from.
INSTALLER_FILES = frozenset({"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"})


class WheelhouseError(Exception):
    """A distribution the install needs cannot be had from this environment: the reason, said."""


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_closure(name: str = PROJECT) -> list[metadata.Distribution]:
    """The installed distributions `name` needs to run, its own excepted (no extras of its own;
    the extras its requirements ask for, such as `pyjwt[crypto]`, followed)."""
    seen: dict[str, metadata.Distribution] = {}
    done: set[tuple[str, str]] = set()
    todo: list[tuple[str, str]] = [(name, "")]
    while todo:
        wanted, extra = todo.pop()
        key = (canonical(wanted), extra)
        if key in done:
            continue
        done.add(key)
        try:
            dist = seen.get(key[0]) or metadata.distribution(key[0])
        except metadata.PackageNotFoundError:
            raise WheelhouseError(f"{key[0]} is needed and not installed here") from None
        seen[key[0]] = dist
        for text in dist.requires or ():
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": extra}):
                todo += [(req.name, e) for e in ("", *sorted(req.extras))]
    return [d for n, d in seen.items() if n != canonical(name)]


def build_backend() -> metadata.Distribution:
    dist = metadata.distribution(BUILD_BACKEND)
    if Version(dist.version) < BUILD_BACKEND_MIN:
        raise WheelhouseError(
            f"setuptools {dist.version} is installed, the project builds with >={BUILD_BACKEND_MIN} "
            "(`make .venv/.installed-test` installs it)"
        )
    return dist


def _tags(wheel_text: str) -> str:
    """`Tag:` lines as a wheel file name's compressed tag set (`cp311-cp311-manylinux…`)."""
    tags = [
        line.split(":", 1)[1].strip() for line in wheel_text.splitlines() if line.startswith("Tag:")
    ]
    parts = list(zip(*(t.split("-") for t in tags), strict=True))
    return "-".join(".".join(sorted(set(p))) for p in parts)


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _members(dist: metadata.Distribution) -> Iterable[str]:
    for path in dist.files or ():
        name = path.as_posix()
        if name.startswith("..") or "__pycache__" in path.parts or name.endswith(".pyc"):
            continue  # scripts outside site-packages are made again from entry_points.txt
        if path.parent.name.endswith(".dist-info") and path.name in INSTALLER_FILES:
            continue
        yield name


def repack(dist: metadata.Distribution, into: Path) -> Path:
    """The wheel `dist` was installed from, again: its files as installed, a fresh RECORD."""
    wheel_text = dist.read_text("WHEEL")
    if wheel_text is None or not dist.files:
        raise WheelhouseError(f"{dist.metadata['Name']} was not installed from a wheel")
    name = re.sub(r"[-_.]+", "_", dist.metadata["Name"]).lower()
    target = into / f"{name}-{dist.version}-{_tags(wheel_text)}.whl"
    record: list[str] = []
    info_dir = next(p.parent.as_posix() for p in dist.files if p.name == "METADATA")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as wheel:
        for arcname in _members(dist):
            data = Path(str(dist.locate_file(arcname))).read_bytes()
            wheel.writestr(arcname, data)
            record.append(_record_line(arcname, data))
        record.append(f"{info_dir}/RECORD,,")
        wheel.writestr(f"{info_dir}/RECORD", "\n".join(record) + "\n")
    return target


def build_wheelhouse(into: Path) -> Path:
    """Every wheel the project's install needs, in `into`."""
    into.mkdir(parents=True, exist_ok=True)
    for dist in [build_backend(), *runtime_closure()]:
        repack(dist, into)
    return into
