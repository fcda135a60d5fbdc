"""Where the repository's CI runs chart-testing (`ct lint`, `ct lint-and-install`, `ct
list-changed`, `ct install`), and with what: its flags, the `CT_*` environment ct reads them from as
well, and the config file it loads. Found in the workflows and what they call (bot/model/ci/runs.py),
`docker run ... ct lint` included.

A flag whose value only the run would know (`--charts ${{ steps.x.outputs.changed }}`) is known to
be given but not its value: the caller decides what that means for its question."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bot.git.objects import Tree
from bot.lru import BoundedCache
from bot.model.ci.runs import Ran, ci_commands
from bot.model.ci.shell import UNKNOWN

SUBCOMMANDS = frozenset({"lint", "lint-and-install", "list-changed", "install"})
# The subcommands that compare a chart's version with the target branch's.
VERSION_CHECKING = frozenset({"lint", "lint-and-install"})
# ct's boolean flags: given alone they mean true, `--flag=false` false (cobra takes no separate
# value for them). Every other flag takes a value.
BOOLEAN_FLAGS = frozenset(
    {
        "all",
        "check-version-increment",
        "debug",
        "print-config",
        "validate-chart-schema",
        "validate-maintainers",
        "validate-yaml",
        "upgrade",
        "skip-missing-values",
        "skip-clean-up",
        "use-helmignore",
        "exclude-deprecated",
    }
)
# ct looks for its config here when no `--config` is given (in the directory it runs in).
CT_DEFAULT_CONFIGS = ("ct.yaml", "ct.yml", "ct.json")
_RUNS: BoundedCache[str, tuple[CtRun, ...]] = BoundedCache(64)


@dataclass(frozen=True)
class CtRun:
    """One `ct` command CI runs."""

    subcommand: str
    flags: Mapping[str, str]  # as given: `--charts a,b` → {"charts": "a,b"}; UNKNOWN inside
    env: Mapping[str, str]  # the `CT_*` variables set where it runs
    ran: Ran

    @property
    def where(self) -> str:
        """Where a reader finds it: the workflow step, and the call that ran it if not the step."""
        step = self.ran.step.where
        return step if self.ran.source == self.ran.step.workflow else f"{step}, {self.ran.where}"

    def setting(self, name: str) -> str | None:
        """A flag's value as ct would take it: the flag, else `CT_NAME` from the environment."""
        if name in self.flags:
            return self.flags[name]
        return self.env.get("CT_" + name.upper().replace("-", "_"))

    def config_path(self, tree: Tree) -> str | None:
        """The config file ct loads: `--config` (UNKNOWN inside when not knowable), else the first
        default that exists."""
        given = self.flags.get("config")
        if given is not None:
            return given.strip().removeprefix("./")
        return next((p for p in CT_DEFAULT_CONFIGS if tree.is_file(p)), None)

    @property
    def checks_versions(self) -> bool:
        return self.subcommand in VERSION_CHECKING


def ct_runs(tree: Tree) -> tuple[CtRun, ...]:
    """Every `ct` command the CI at `tree` runs; remembered per commit."""
    return _RUNS.get_or_make(tree.commit, lambda: _find(tree))


def _find(tree: Tree) -> tuple[CtRun, ...]:
    found = []
    for ran in ci_commands(tree):
        run = _ct_run(ran)
        if run is not None:
            found.append(run)
    return tuple(found)


def _ct_run(ran: Ran) -> CtRun | None:
    """The ct command `ran` is, wherever `ct` stands in it (`docker run IMAGE ct lint ...`), its
    flags before the subcommand (`ct --config x lint`) counted too."""
    words = ran.command.words
    for i, word in enumerate(words):
        if word.rsplit("/", 1)[-1] != "ct":
            continue
        sub = next((j for j in range(i + 1, len(words)) if not words[j].startswith("-")), None)
        while sub is not None and words[sub] not in SUBCOMMANDS and _takes_value(words[sub - 1]):
            sub = next(
                (j for j in range(sub + 1, len(words)) if not words[j].startswith("-")), None
            )
        if sub is not None and words[sub] in SUBCOMMANDS:
            env = {k: v for k, v in ran.command.env.items() if k.startswith("CT_")}
            flags = _flags((*words[i + 1 : sub], *words[sub + 1 :]))
            return CtRun(words[sub], flags, env, ran)
    return None


def _takes_value(word: str) -> bool:
    """Whether `word` is a flag whose value is the next word."""
    return word.startswith("--") and "=" not in word and word[2:] not in BOOLEAN_FLAGS


def _flags(words: tuple[str, ...]) -> dict[str, str]:
    flags: dict[str, str] = {}
    values = iter(words)
    for word in values:
        if not word.startswith("--"):
            continue
        name, equals, value = word[2:].partition("=")
        if not equals:
            value = "true" if name in BOOLEAN_FLAGS else next(values, UNKNOWN)
        if name in ("charts", "chart-dirs", "excluded-charts", "chart-repos") and name in flags:
            value = f"{flags[name]},{value}"  # repeatable, as comma-separated lists
        flags[name] = value
    return flags


def flag_true(value: str | None) -> bool | None:
    """A boolean flag's value: None where it is not given or not knowable."""
    if value is None or UNKNOWN in value:
        return None
    lowered = value.strip().strip("'\"").lower()
    if lowered in ("true", "1", "t"):
        return True
    if lowered in ("false", "0", "f"):
        return False
    return None
