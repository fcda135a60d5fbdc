"""Crafted YAML from a PR is a clear error naming the file, never a crash of the review."""

from __future__ import annotations

import pytest

from bot.model.config import ConfigError, parse_config
from bot.model.manifests import ManifestError, parse_rendered

CRAFTED = [
    'a: !!bool "maybe"\n',  # PyYAML: KeyError
    "a: !!int x\n",  # ValueError
    "a: !!timestamp 2020-99-99\n",  # ValueError
    "a: " + "[" * 20000 + "]" * 20000 + "\n",  # deep nesting
    "a: !!python/name:os.system\n",  # not safe: refused
]


@pytest.mark.parametrize("text", CRAFTED)
def test_a_crafted_template_is_a_manifest_error_naming_it(text: str) -> None:
    rendered = {"app/templates/evil.yaml": "kind: ConfigMap\nmetadata: {name: x}\n" + text}
    with pytest.raises(ManifestError) as caught:
        parse_rendered(rendered, "app", "default")
    assert caught.value.template == "app/templates/evil.yaml"
    assert "rendered output is not valid YAML" in str(caught.value)


@pytest.mark.parametrize("text", CRAFTED)
def test_a_crafted_config_is_a_config_error(text: str) -> None:
    with pytest.raises(ConfigError, match=r"\.github/chart-review\.yml"):
        parse_config(text)


def test_deep_nesting_in_a_config_is_refused_by_depth_not_by_recursion() -> None:
    deep = "a: " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(ConfigError, match=r"chart-review\.yml line 1: .*nesting depth"):
        parse_config(deep)
