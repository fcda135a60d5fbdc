"""Every command a repository's CI runs, as far as its files say: each workflow step's script, and
through it the Makefile targets (`make lint`, their prerequisites first) and the repository's own
scripts (`./scripts/lint.sh`, `bash hack/ct.sh`) it calls, followed a few calls deep.

What is followed is bounded (MAX_FOLLOWED files or targets per step, MAX_DEPTH calls deep, each
file at most MAX_FILE_BYTES): the files are the base's, but a review must not pay for a crafted
one."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.git.objects import Tree
from bot.lru import BoundedCache
from bot.model.ci.shell import UNKNOWN, Command, commands, logical_lines
from bot.model.ci.workflows import Step, workflow_steps

MAX_DEPTH = 4
MAX_FOLLOWED = 64
MAX_FILE_BYTES = 256 * 1024
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
_COMMANDS: BoundedCache[str, tuple[Ran, ...]] = BoundedCache(64)
SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
MAKE_VARIABLE_RE = re.compile(
    r"^(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*(:{1,3}=|\?=|\+=|=)\s*(.*)$"
)
MAKE_RULE_RE = re.compile(r"^([^\s#:=][^:=]*?)\s*::?(?!=)(.*)$")
MAKE_REFERENCE_RE = re.compile(r"\$(?:\(([^()$]*)\)|\{([^{}$]*)\}|(\$)|([A-Za-z0-9_@<^*?]))")


@dataclass(frozen=True)
class Ran:
    """One command CI runs, and how it got there (the step, then each call that led to it)."""

    command: Command
    step: Step
    via: tuple[str, ...] = ()  # "make lint", "scripts/lint.sh line 3"
    source: str = ""  # the file holding the command
    line: int = 0

    @property
    def where(self) -> str:
        return f"{self.source} line {self.line}"


@dataclass
class _Budget:
    left: int = MAX_FOLLOWED
    seen: set[str] = field(default_factory=set)

    def take(self, key: str) -> bool:
        if key in self.seen or self.left <= 0:
            return False
        self.seen.add(key)
        self.left -= 1
        return True


def ci_commands(tree: Tree) -> tuple[Ran, ...]:
    """Every command the workflows at `tree` run, directly or through make and scripts;
    remembered per commit."""
    return _COMMANDS.get_or_make(tree.commit, lambda: _ci_commands(tree))


def _ci_commands(tree: Tree) -> tuple[Ran, ...]:
    found: list[Ran] = []
    for step in workflow_steps(tree):
        if step.run is None:
            continue
        for command in commands(step.run, step.env):
            ran = Ran(command, step, (), step.workflow, step.line + command.line - 1)
            found += _followed(tree, ran, _Budget(), 0)
    return tuple(found)


def _followed(tree: Tree, ran: Ran, budget: _Budget, depth: int) -> list[Ran]:
    out = [ran]
    if depth >= MAX_DEPTH:
        return out
    command = ran.command
    if command.name in ("make", "gmake"):
        out += _make(tree, ran, budget, depth)
    else:
        script = _script(tree, command)
        if script is not None and budget.take(script):
            text = _text(tree, script) or ""
            for inner in commands(text, command.env):
                via = (*ran.via, f"{script}")
                out += _followed(
                    tree, Ran(inner, ran.step, via, script, inner.line), budget, depth + 1
                )
    return out


def _text(tree: Tree, path: str) -> str | None:
    data = tree.read(path)
    if data is None or len(data) > MAX_FILE_BYTES:
        return None
    return data.decode(errors="replace")


def _script(tree: Tree, command: Command) -> str | None:
    """The repository file `command` runs as a script, if it is one."""
    words = command.words
    if command.name in SHELLS:
        words = tuple(w for w in words[1:] if not w.startswith("-"))
    if not words or UNKNOWN in words[0]:
        return None
    path = words[0].removeprefix("./")
    if "/" not in path and not path.endswith(".sh"):
        return None  # a program on PATH
    return path if tree.is_file(path) else None


@dataclass(frozen=True)
class _Makefile:
    path: str
    variables: Mapping[str, str]
    rules: Mapping[str, tuple[tuple[str, ...], tuple[tuple[int, str], ...]]]  # deps, recipe
    first: str | None


def _make(tree: Tree, ran: Ran, budget: _Budget, depth: int) -> list[Ran]:
    directory, file, targets, assigned = _make_arguments(ran.command.words[1:])
    makefile = _makefile(tree, directory, file)
    if makefile is None:
        return []
    variables = {**makefile.variables, **assigned}
    wanted = list(targets) or ([makefile.first] if makefile.first else [])
    out: list[Ran] = []
    for target in wanted:
        out += _target(tree, makefile, target, variables, ran, budget, depth)
    return out


def _target(
    tree: Tree,
    makefile: _Makefile,
    target: str,
    variables: Mapping[str, str],
    ran: Ran,
    budget: _Budget,
    depth: int,
) -> list[Ran]:
    rule = makefile.rules.get(target)
    if rule is None or not budget.take(f"{makefile.path}:{target}"):
        return []
    deps, recipe = rule
    out: list[Ran] = []
    for dep in deps:
        out += _target(tree, makefile, dep, variables, ran, budget, depth)
    env = ran.command.env
    for number, line in recipe:
        text = _make_expand(line.lstrip("@-+ \t"), variables, env)
        for inner in commands(text, env):
            via = (*ran.via, f"make {target}")
            inner_ran = Ran(inner, ran.step, via, makefile.path, number)
            out += _followed(tree, inner_ran, budget, depth + 1)
    return out


def _make_arguments(
    words: tuple[str, ...],
) -> tuple[str, str | None, tuple[str, ...], dict[str, str]]:
    directory, file, targets, assigned = "", None, [], {}
    values = iter(words)
    for word in values:
        if word in ("-C", "--directory"):
            directory = next(values, "")
        elif word in ("-f", "--file", "--makefile"):
            file = next(values, None)
        elif word.startswith("-"):
            continue
        elif "=" in word:
            name, _, value = word.partition("=")
            assigned[name] = value
        else:
            targets.append(word)
    return directory.removeprefix("./").rstrip("/"), file, tuple(targets), assigned


def _makefile(tree: Tree, directory: str, file: str | None) -> _Makefile | None:
    prefix = f"{directory}/" if directory and directory != "." else ""
    names = (file,) if file else MAKEFILES
    for name in names:
        if name is None or UNKNOWN in name or UNKNOWN in prefix:
            return None
        path = f"{prefix}{name.removeprefix('./')}"
        text = _text(tree, path)
        if text is not None:
            return _parse_makefile(path, text)
    return None


def _parse_makefile(path: str, text: str) -> _Makefile:
    variables: dict[str, str] = {}
    deps: dict[str, tuple[str, ...]] = {}
    recipes: dict[str, list[tuple[int, str]]] = {}
    first: str | None = None
    current: list[str] = []  # the targets the recipe lines being read belong to
    for number, line in logical_lines(text):
        if line.startswith("\t"):
            for target in current:
                recipes[target].append((number, line[1:]))
            continue
        current = []
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        variable = MAKE_VARIABLE_RE.match(stripped)
        if variable is not None:
            _assign(variables, *variable.groups())
            continue
        rule = MAKE_RULE_RE.match(stripped)
        if rule is None:
            continue
        prerequisites, _, inline = rule.group(2).partition(";")
        # .PHONY and make's other special targets name no recipe of their own.
        current = [t for t in rule.group(1).split() if not (t.startswith(".") and "/" not in t)]
        for target in current:
            deps[target] = tuple(d for d in prerequisites.split() if not d.startswith("|"))
            recipes[target] = [(number, inline)] if inline.strip() else []
            first = first or target
    rules = {t: (deps[t], tuple(recipes[t])) for t in deps}
    return _Makefile(path, variables, rules, first)


def _assign(variables: dict[str, str], name: str, op: str, value: str) -> None:
    if op == "?=" and name in variables:
        return
    if op == "+=":
        variables[name] = f"{variables.get(name, '')} {value}".strip()
    else:
        variables[name] = value


def _make_expand(
    text: str, variables: Mapping[str, str], env: Mapping[str, str], depth: int = 0
) -> str:
    """A recipe line as make hands it to the shell: `$(NAME)` and `${NAME}` from the Makefile, else
    the environment; `$$` is the shell's `$`; functions (`$(shell ...)`) are UNKNOWN."""

    def value(match: re.Match[str]) -> str:
        if match.group(3):
            return "$"
        name = (match.group(1) or match.group(2) or match.group(4) or "").strip()
        if name == "MAKE":
            return "make"
        if " " in name or name in "@<^*?":
            return UNKNOWN
        if name in variables:
            inner = variables[name]
            return _make_expand(inner, variables, env, depth + 1) if depth < 8 else UNKNOWN
        return env.get(name, UNKNOWN)

    return MAKE_REFERENCE_RE.sub(value, text)
