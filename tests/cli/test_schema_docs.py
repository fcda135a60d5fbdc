"""docs/config.schema.json: what `make docs` writes from the config's models,
admitting every example config the docs show, and refusing what the bot's parser refuses."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from bot.cli.schema_docs import CONFIG_SCHEMA, config_schema, config_schema_text
from bot.model.config import CONFIG_PATH, ConfigError, parse_config
from checks import REGISTRY
from tests.support.report_schema import schema_errors

ROOT = Path(__file__).resolve().parents[2]
# A fenced YAML block of the docs is a config when its first line names the file.
CONFIG_BLOCK = re.compile(rf"^```yaml\n# {re.escape(CONFIG_PATH)}\n(.*?)^```", re.M | re.S)
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md")))


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = config_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def example_configs() -> list[tuple[str, str]]:
    """(where, text) of every config the docs and examples/ hold."""
    found = [
        (f"{doc.relative_to(ROOT)} block {n}", block)
        for doc in DOCS
        for n, block in enumerate(CONFIG_BLOCK.findall(doc.read_text()), 1)
    ]
    found += [
        (str(p.relative_to(ROOT)), p.read_text()) for p in ROOT.glob(f"examples/**/{CONFIG_PATH}")
    ]
    return found


def test_the_committed_schema_is_what_the_models_generate() -> None:
    assert CONFIG_SCHEMA == ROOT / "docs" / "config.schema.json"
    assert CONFIG_SCHEMA.read_text() == config_schema_text(), (
        f"{CONFIG_SCHEMA.relative_to(ROOT)} is stale: run `make docs`"
    )


def test_every_example_config_is_valid_for_the_schema_and_the_bot(
    validator: jsonschema.Draft202012Validator,
) -> None:
    examples = example_configs()
    assert {where.split()[0] for where, _ in examples} >= {
        "README.md",
        "examples/prs/probes/401-forbid-restart-probes/files/.github/chart-review.yml",
    }
    for where, text in examples:
        assert schema_errors(validator, yaml.safe_load(text)) == [], where
        parse_config(text, where, known_checks=REGISTRY.options)  # raises on what it refuses


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("chekcs: {}\n", "(top): Additional properties are not allowed ('chekcs' was unexpected)"),
        ("checks: {nosuch: {enabled: false}}\n", "checks: 'nosuch' is not one of"),
        ("checks: {version: {enabled: false}}\n", "checks: 'version' is not one of"),
        ("checks: {qos: {severity: error}}\n", "checks/qos/severity: 'error' is not valid"),
        ("check_runs: each\n", "check_runs: 'each' is not one of ['one', 'per-check']"),
        ("kube_version: 1.30\n", "kube_version: 1.3 is not valid under any of the given schemas"),
        ("links: {max_repositories: 6}\n", "links/max_repositories: 6 is greater than"),
        ("profiles: [{chart: app}]\n", "profiles/0: 'name' is a required property"),
    ],
)
def test_the_schema_refuses_what_the_bot_refuses(
    validator: jsonschema.Draft202012Validator, text: str, error: str
) -> None:
    [said] = schema_errors(validator, yaml.safe_load(text))
    assert said.startswith(error), said
    with pytest.raises(ConfigError):
        parse_config(text, known_checks=REGISTRY.options)
