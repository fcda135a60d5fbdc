"""docs/config.schema.json, the JSON Schema of `.github/chart-review.yml`, generated from the
config's models (bot/model/config_models.py) and the options each registered check declares (its
model, under `checks:` or at the top level), so that an editor can complete and check the file. `make docs` writes it with the other generated pages
(bot/cli/docs_pages/); a test fails when the committed file is not what this writes
(tests/cli/test_schema_docs.py).

The models stay the authority: the schema says the keys and types, and `checks:` the names of the
checks; what only a validator says (a `kube_version` the renderer can read, `links.repositories`
patterns, a dependency's URL scheme) the bot still refuses with the key and line, as it always did."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, create_model

from bot.model.config import CONFIG_PATH, CheckConfig, Config
from checks import REGISTRY

DOCS = Path(__file__).resolve().parents[2] / "docs"
CONFIG_SCHEMA = DOCS / "config.schema.json"
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def config_schema() -> dict[str, Any]:
    """The config's JSON Schema (draft 2020-12, as pydantic writes it), titled for the file."""
    schema = file_model().model_json_schema()
    checks = schema["properties"]["checks"]
    # The names parse_config accepts under `checks:`: a check whose options sit at the top level
    # is an error there, as is any name that is no check.
    under = [o for o in REGISTRY.options if not o.top_level]
    checks["propertyNames"] = {"enum": sorted(o.name for o in under)}
    own = {o.name: o.model for o in under if o.model is not CheckConfig}
    if own:
        checks["properties"] = {n: {"$ref": f"#/$defs/{m.__name__}"} for n, m in own.items()}
        for model in own.values():
            part = model.model_json_schema(ref_template="#/$defs/{model}")
            schema["$defs"].update({**part.pop("$defs", {}), model.__name__: part})
    return {
        "$schema": DRAFT,
        "title": f"chart-review config ({CONFIG_PATH})",
        "description": (
            "Read at the PR's base. Generated from bot/model/config_models.py by `make docs`; "
            "docs/config.md says what each key does."
        ),
        **{k: v for k, v in schema.items() if k not in ("title", "description")},
    }


def file_model() -> type[BaseModel]:
    """The file's whole model: the config's settings and the top-level checks' options, each
    described as its check's."""
    tops: dict[str, Any] = {
        o.name: (
            o.model,
            Field(default_factory=o.model, description=f"the {o.name} check's options"),
        )
        for o in REGISTRY.options
        if o.top_level
    }
    return create_model("Config", __base__=Config, **tops)


def config_schema_text() -> str:
    return json.dumps(config_schema(), indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    CONFIG_SCHEMA.write_text(config_schema_text())
    print(f"wrote {CONFIG_SCHEMA}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
