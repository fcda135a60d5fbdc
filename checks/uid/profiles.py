"""Which profiles run where the platform assigns UIDs, and why: the uid check's notion of an
"assigned-UID profile" (config `arbitrary_uid`, a rendered SCC, or an `openshift` value)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from bot.git.objects import Tree
from bot.lru import BoundedCache
from bot.model.config import ProfileSpec
from bot.model.context import Rendered
from bot.model.yaml import bounded
from bot.model.yaml.blocks import load_mappings
from bot.model.yaml.errors import YAML_FAILURES
from checks.uid.scc import SCC_KIND

OPENSHIFT_KEY = "openshift"
WHY_MARKED = "is marked `arbitrary_uid` in config"
WHY_SCC = f"renders a {SCC_KIND}"
WHY_VALUES = "sets `{key}: true` in its values"

# values.yaml texts' flags remembered: a worker reviews the same few charts again and again.
_DEFAULTS: BoundedCache[str, Mapping[str, bool]] = BoundedCache(64)
# A YAML escape that can spell a letter, or join two lines, in a double-quoted key: where the text
# has none, a key that lower-cases to `openshift` is written so in the text.
_SPELLING_ESCAPE = re.compile(r"\\[xuU\r\n\x85\u2028\u2029]")


def assigned_uid_reason(
    rendered: Rendered, spec: ProfileSpec | None, defaults: Mapping[str, bool] | None = None
) -> str | None:
    """Why a profile runs where UIDs are assigned, or None when it does not. `defaults` are the
    `openshift_flags` of the chart's own values.yaml, which a profile's values override key by
    key."""
    if spec is not None and spec.arbitrary_uid:
        return WHY_MARKED
    if any(doc.kind == SCC_KIND for doc in rendered.documents):
        return WHY_SCC
    flags = {**(defaults or {}), **openshift_flags(rendered.values)}
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


def default_flags(tree: Tree, chart: str) -> Mapping[str, bool]:
    """The `openshift_flags` of the chart's values.yaml; none when it is missing or unreadable
    (the render reports that). Read-only: the same text gives the same flags, found once. A text
    that cannot hold an `openshift` key is not parsed: most charts', kube-prometheus-stack's
    5,000 lines among them, which a replay otherwise parsed at each of its versions."""
    text = tree.text("values.yaml" if chart in ("", ".") else f"{chart}/values.yaml")
    if not text or not may_hold_openshift(text):
        return {}
    return _DEFAULTS.get_or_make(text, lambda: openshift_flags(_parse_defaults(text)))


def may_hold_openshift(text: str) -> bool:
    """Whether a key of the YAML `text` may lower-case to `openshift`. Lower-casing maps each
    character alone, so such a key written as it reads is found in the lower-cased text; one
    written otherwise needs an escape (`"\\x6fpenshift"`, a line joined by `\\`), which is
    looked for."""
    return OPENSHIFT_KEY in text.lower() or _SPELLING_ESCAPE.search(text) is not None


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
