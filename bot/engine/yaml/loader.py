"""The YAML loader every parse of PR content uses: libyaml's safe loader, ~12x faster than PyYAML's
pure-Python one, which also recurses where libyaml refuses deep nesting cleanly."""

from __future__ import annotations

import yaml

try:
    LOADER: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    LOADER = yaml.SafeLoader
