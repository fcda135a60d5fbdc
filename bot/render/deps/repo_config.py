"""`--repository-config`: Helm's own `repositories.yaml` (what `helm repo add` writes), for the
names charts use in place of URLs (`@bitnami`, `alias:bitnami`) and the credentials of private
chart repositories. It is the bot's file, on its machine: never a file of the reviewed repository."""

from __future__ import annotations

from pathlib import Path

import yaml

from bot.errors import ChartReviewError
from bot.render.deps.policy import Access


class RepositoryConfigError(ChartReviewError):
    """The file cannot be used; the message names it and the entry."""


def load_repository_config(path: str) -> tuple[Access, ...]:
    try:
        data = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise RepositoryConfigError(f"{path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise RepositoryConfigError(f"{path}: not valid YAML: {exc}") from None
    entries = data.get("repositories") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise RepositoryConfigError(f"{path}: expected a `repositories:` list, as helm writes")
    found = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not entry.get("name") or not entry.get("url"):
            raise RepositoryConfigError(f"{path}: repositories[{index}] needs a name and a url")
        found.append(
            Access(
                str(entry["url"]),
                str(entry["name"]),
                username=_text(entry.get("username")),
                password=_text(entry.get("password")),
            )
        )
    return tuple(found)


def _text(value: object) -> str | None:
    return str(value) if value not in (None, "") else None
