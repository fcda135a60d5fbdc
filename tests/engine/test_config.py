"""`.github/chart-review.yml`: what a typo in a check's name does (an error naming it, never a
silently ignored setting)."""

from __future__ import annotations

import pytest

from bot.engine.config import ConfigError, parse_config

KNOWN = ("qos", "version", "headings", "uid", "probes", "selectors")


def test_a_check_name_with_a_typo_is_an_error_naming_the_line() -> None:
    text = "release_name: r\nchecks:\n  qoss:\n    enabled: false\n"
    with pytest.raises(
        ConfigError, match=r"line 3: 'checks.qoss': unknown check \(one of headings"
    ):
        parse_config(text, known_checks=KNOWN)


@pytest.mark.parametrize("name", ["version", "probes"])
def test_a_top_level_check_under_checks_says_where_it_belongs(name: str) -> None:
    with pytest.raises(ConfigError, match=rf"line 2: 'checks.{name}': .* top-level '{name}:' key"):
        parse_config(f"checks:\n  {name}:\n    enabled: false\n")


def test_known_checks_and_their_options_are_accepted() -> None:
    config = parse_config(
        "checks:\n  qos:\n    severity: {downgrade: warning}\n  uid: {enabled: false}\n"
        "version:\n  enabled: false\n",
        known_checks=KNOWN,
    )
    assert not config.enabled("uid") and not config.enabled("version") and config.enabled("qos")
