"""Which profiles run where the platform assigns UIDs, and why: the uid check's notion of an
"assigned-UID profile" (config `arbitrary_uid`, a rendered SCC, or an `openshift` value)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.engine.config import ProfileSpec
from bot.engine.context import Rendered
from bot.engine.yaml import bounded
from bot.engine.yaml.blocks import load_mappings
from bot.engine.yaml.errors import YAML_FAILURES
from bot.git.objects import Tree
from bot.lru import BoundedCache
from checks.uid.scc import SCC_KIND

OPENSHIFT_KEY = "openshift"
WHY_MARKED = "is marked `arbitrary_uid` in config"
WHY_SCC = f"renders a {SCC_KIND}"
WHY_VALUES = "sets `{key}: true` in its values"

# values.yaml texts remembered: a worker reviews the same few charts again and again.
_DEFAULTS: BoundedCache[str, Mapping[str, Any]] = BoundedCache(64)


def assigned_uid_reason(
    rendered: Rendered, spec: ProfileSpec | None, defaults: Mapping[str, Any] | None = None
) -> str | None:
    """Why a profile runs where UIDs are assigned, or None when it does not. `defaults` are the
    chart's own values.yaml, which a profile's values override key by key."""
    if spec is not None and spec.arbitrary_uid:
        return WHY_MARKED
    if any(doc.kind == SCC_KIND for doc in rendered.documents):
        return WHY_SCC
    flags = {**openshift_flags(defaults or {}), **openshift_flags(rendered.values)}
    key = next((path for path, on in sorted(flags.items()) if on), None)
    return WHY_VALUES.format(key=key) if key else None


def openshift_flags(values: Mapping[str, Any], prefix: str = "") -> dict[str, bool]:
    """Every `openshift` key (or `openshift.enabled`) by dotted path, and whether it is true."""
    flags: dict[str, bool] = {}
    for key, value in values.items():
        path = f"{prefix}{key}"
        if str(key).lower() == OPENSHIFT_KEY and not isinstance(value, dict):
            flags[path] = value is True
        elif str(key).lower() == OPENSHIFT_KEY and "enabled" in value:
            flags[f"{path}.enabled"] = value["enabled"] is True
        elif isinstance(value, dict):
            flags.update(openshift_flags(value, f"{path}."))
    return flags


def chart_defaults(tree: Tree, chart: str) -> Mapping[str, Any]:
    """The chart's values.yaml; empty when it is missing or unreadable (the render reports that).
    Read-only: the same text gives the same mapping, parsed once."""
    text = tree.text("values.yaml" if chart in ("", ".") else f"{chart}/values.yaml")
    return _DEFAULTS.get_or_make(text, lambda: _parse_defaults(text)) if text else {}


def _parse_defaults(text: str) -> Mapping[str, Any]:
    try:
        if _one_document(text):
            # Block by block (with the alias budget where an anchor may be): a chart's next
            # version changes a few of its values, and the rest was parsed before.
            found = load_mappings(text)
            return found[0] if found else {}
        data = bounded.load(text)  # the first document, as every read of a values file
    except YAML_FAILURES:
        return {}
    return data if isinstance(data, dict) else {}


def _one_document(text: str) -> bool:
    """No document marker: the text's mapping, if any, is its first document."""
    return not text.startswith(("---", "...", "%")) and not any(
        m in text for m in ("\n---", "\n...", "\n%")
    )
