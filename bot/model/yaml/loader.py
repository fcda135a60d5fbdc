"""The YAML loader every parse of PR content uses: libyaml's safe loader, ~12x faster than PyYAML's
pure-Python one, which also recurses where libyaml refuses deep nesting cleanly."""

from __future__ import annotations

import yaml

_BASE: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# YAML 1.1's "value" tag: PyYAML resolves a plain `=` to it and then has no constructor for it, so
# a document Helm (Go's YAML) reads as the string "=" failed to parse. prometheus-operator's CRDs
# list `- =` among a selector operator's enum.
VALUE_TAG = "tag:yaml.org,2002:value"


class Loader(_BASE):
    """The safe loader, reading `=` as the string it is."""


Loader.add_constructor(VALUE_TAG, lambda loader, node: loader.construct_scalar(node))

LOADER: type = Loader
