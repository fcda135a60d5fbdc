"""`Chart.lock` (or an apiVersion v1 chart's `requirements.lock`): the exact versions `helm
dependency update` resolved, and whether the lock still matches the dependencies it was made from.

`helm dependency build` (what chart-testing runs before it lints) refuses a lock whose `digest` is
not the hash of those dependencies: Helm hashes the dependencies file's `dependencies` and the
lock's, as Go's encoding/json writes them. `lock_digest` writes them the same way, so the review
says "out of sync" exactly when Helm would (checked on every lock of the public corpus). An
apiVersion v1 chart's lock may come from Helm 2, which hashed the dependencies alone: Helm accepts
that digest too (`v2_digest`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import yaml

from bot.git.objects import Tree
from bot.kube.constraint import satisfies
from bot.lru import BoundedCache
from bot.model.chart_files import CHART_FILE, REQUIREMENTS_FILE, dir_prefix
from bot.model.yaml import bounded
from bot.model.yaml.errors import YAML_FAILURES

LOCK_FILE = "Chart.lock"
# Helm's loader reads requirements.lock after Chart.lock: where both are, it is the lock.
V1_LOCK_FILE = "requirements.lock"
_OUT_OF_SYNC = (
    "the lock file ({lock}) is out of sync with the dependencies file ({deps}). "
    "Please update the dependencies"
)
OUT_OF_SYNC = _OUT_OF_SYNC.format(lock=LOCK_FILE, deps=CHART_FILE)
V1_OUT_OF_SYNC = _OUT_OF_SYNC.format(lock=V1_LOCK_FILE, deps=REQUIREMENTS_FILE)
# A dependency's fields in the order Go declares them, and whether `omitempty` drops an empty one.
_FIELDS = (
    ("name", False),
    ("version", True),
    ("repository", False),
    ("condition", True),
    ("tags", True),
    ("enabled", True),
    ("import-values", True),
    ("alias", True),
)
# Every scalar a string, as Helm's struct fields read them: `version: 1.10` stays "1.10".
_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


@dataclass(frozen=True)
class Locked:
    """One resolved dependency of a `Chart.lock`."""

    name: str
    version: str
    repository: str


@dataclass(frozen=True)
class Lock:
    path: str  # the lock file in the repository
    dependencies: tuple[Locked, ...] = ()
    in_sync: bool = True
    error: str | None = None  # the lock cannot be read: said as Helm would fail on it
    v1: bool = False  # an apiVersion v1 chart: Helm names requirements.yaml and its lock

    @property
    def out_of_sync(self) -> str:
        """Helm's words when it refuses the lock."""
        return V1_OUT_OF_SYNC if self.v1 else OUT_OF_SYNC

    def version_of(self, name: str, repository: str) -> str | None:
        for dep in self.dependencies:
            if dep.name == name and same_repository(dep.repository, repository):
                return dep.version
        return None


def read_lock(tree: Tree, chart_dir: str) -> Lock | None:
    """The chart's lock at `tree` against the dependencies it declares, or None when it has none."""
    prefix = dir_prefix(chart_dir)
    path = f"{prefix}{V1_LOCK_FILE}"
    text = tree.text(path)
    if text is None:
        path = f"{prefix}{LOCK_FILE}"
        text = tree.text(path)
    if text is None:
        return None
    chart_text = tree.text(f"{prefix}{CHART_FILE}") or ""
    requirements_text = tree.text(f"{prefix}{REQUIREMENTS_FILE}")
    key = (path, text, chart_text, requirements_text)
    size = len(text) + len(chart_text) + len(requirements_text or "")
    return _LOCKS.get_or_make(key, lambda: (_lock(*key), size))[0]


# Read locks by their files' texts, weighed by them (a PR's files may be large): both sides of
# every review read each chart's lock, and a replay or the next push reads the same one again (a
# chart's lock changes with its dependencies, seldom).
_LOCKS: BoundedCache[tuple[str, str, str, str | None], tuple[Lock, int]] = BoundedCache(
    4 << 20, lambda kept: 256 + kept[1]
)


def _lock(path: str, text: str, chart_text: str, requirements_text: str | None) -> Lock:
    lock = _mapping(text)
    chart = _mapping(chart_text)
    # Helm's loader takes a chart without apiVersion as v1.
    v1 = (chart or {}).get("apiVersion", "v1") in ("v1", "")
    if lock is None:
        return Lock(path, error=f"{path} is not a YAML mapping Helm can read", v1=v1)
    declared = _mapping(requirements_text) if requirements_text is not None else None
    source = declared if declared is not None and "dependencies" in declared else chart
    requirements = _entries(source.get("dependencies") if source else None)
    locked = _entries(lock.get("dependencies"))
    entries = tuple(
        Locked(str(d.get("name", "")), str(d.get("version", "")), str(d.get("repository", "")))
        for d in locked
    )
    digest = lock.get("digest")
    in_sync = digest == lock_digest(requirements, locked) or (
        v1 and digest == v2_digest(requirements)
    )
    if not in_sync and any("import-values" in d for d in requirements):
        # Helm hashes `import-values` in a form this does not reproduce (seen with Helm 4): a
        # mismatch there is no evidence, so only what the lock must hold is checked.
        in_sync = _covers(requirements, entries)
    return Lock(path, entries, in_sync=in_sync, v1=v1)


def _covers(requirements: list[dict[str, Any]], locked: tuple[Locked, ...]) -> bool:
    """Every dependency has its lock entry, from the same repository, at a version its range
    allows: what `helm dependency build` needs of a lock to build from it."""
    by_name = {d.name: d for d in locked}
    for req in requirements:
        entry = by_name.get(str(req.get("name", "")))
        if entry is None or not same_repository(entry.repository, str(req.get("repository", ""))):
            return False
        if not satisfies(entry.version, str(req.get("version") or "*")):
            return False
    return len(by_name) == len(requirements)


def lock_digest(requirements: list[dict[str, Any]], locked: list[dict[str, Any]]) -> str:
    """Helm's `HashReq`: sha256 of `[requirements, locked]` as Go's json.Marshal writes them."""
    return _go_digest(
        [[_go_dependency(d) for d in requirements], [_go_dependency(d) for d in locked]]
    )


def v2_digest(requirements: list[dict[str, Any]]) -> str:
    """Helm 2's digest, which Helm 3 still accepts for an apiVersion v1 chart (`HashV2Req`):
    sha256 of `{"dependencies": requirements}`."""
    return _go_digest({"dependencies": [_go_dependency(d) for d in requirements]})


def _go_digest(data: object) -> str:
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    # Go escapes these three in every string, so the bytes hashed differ from Python's unless
    # they are escaped the same way.
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _go_dependency(entry: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, omit_empty in _FIELDS:
        value = entry.get(key)
        if key == "enabled":
            value = value in ("true", True)
        elif key == "import-values" and isinstance(value, list):
            value = [_sorted(v) for v in value]  # Go writes a map's keys sorted
        elif value is None:
            value = ""
        if omit_empty and not value:
            continue
        out[key] = value
    return out


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    return [_sorted(v) for v in value] if isinstance(value, list) else value


def same_repository(a: str, b: str) -> bool:
    """Helm writes the repository as given; a trailing slash names the same repository."""
    return a.rstrip("/") == b.rstrip("/")


def _mapping(text: str) -> dict[str, Any] | None:
    try:
        data = bounded.load(text, _LOADER)
    except YAML_FAILURES:
        return None
    return data if isinstance(data, dict) else None


def _entries(value: object) -> list[dict[str, Any]]:
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []
