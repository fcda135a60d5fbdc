"""A repository's GitHub Actions workflows as the steps they run, each with the environment and the
`with:` inputs GitHub would give it, as far as the files say.

GitHub fills `${{ ... }}` in before the shell sees a step's script: `inputs.NAME` (a reusable
workflow's input: its caller's `with:` where a workflow of this repository calls it, else its
default), `env.NAME` and literals are filled in here; anything else (`matrix`, `steps`, `github`) is
`UNKNOWN`. A reusable workflow's steps run under its callers' triggers."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from bot.git.objects import Tree
from bot.lru import BoundedCache
from bot.model.ci.shell import UNKNOWN
from bot.model.yaml.errors import YAML_FAILURES
from bot.model.yaml.loader import LOADER

WORKFLOWS = ".github/workflows/"
# What is read of them: CI files are the base's, but a crafted one must not cost a review much.
MAX_WORKFLOWS = 200
MAX_WORKFLOW_BYTES = 256 * 1024
MAX_NODES = 50_000  # YAML nodes converted per workflow (aliases included)
MAX_CALL_DEPTH = 3  # reusable workflows calling reusable workflows
LOCAL_WORKFLOW_RE = re.compile(r"^\./(\.github/workflows/[^@\s]+\.ya?ml)$")
_STEPS: BoundedCache[str, tuple[Step, ...]] = BoundedCache(64)


@dataclass(frozen=True)
class Step:
    """One step of one job, as GitHub would run it for the triggers in `on`."""

    workflow: str
    line: int  # of the step's script in its workflow file (its first line), else of the step
    job: str
    name: str
    run: str | None
    uses: str | None
    with_: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    on: frozenset[str] = frozenset()  # the events that run it, `push`, `pull_request`, ...
    branches: tuple[str, ...] = ()  # `on.push.branches`, when the workflow names them

    @property
    def where(self) -> str:
        return f"{self.workflow} line {self.line}"


@dataclass(frozen=True)
class _Node:
    """A YAML value with the line it starts on."""

    value: Any  # str, list[_Node], dict[str, _Node]
    line: int
    block: bool = False  # a `|` or `>` scalar, whose text starts on the next line


def workflow_steps(tree: Tree) -> tuple[Step, ...]:
    """Every step of every workflow under `.github/workflows/` at `tree`; remembered per commit
    (the version check asks per chart, the ct config once per review)."""
    return _STEPS.get_or_make(tree.commit, lambda: _workflow_steps(tree))


def _workflow_steps(tree: Tree) -> tuple[Step, ...]:
    files = [p for p in tree.paths(WORKFLOWS) if p.endswith((".yml", ".yaml"))][:MAX_WORKFLOWS]
    parsed = {p: doc for p in files if (doc := _document(tree, p)) is not None}
    called = {c for doc in parsed.values() for c, _ in _calls(doc)}
    steps: list[Step] = []
    for path, doc in parsed.items():
        on, branches = _triggers(doc)
        if path not in called or on - {"workflow_call"}:
            steps += _steps(parsed, path, doc, _defaults(doc), on, branches, 0)
    return tuple(steps)


def _document(tree: Tree, path: str) -> dict[str, _Node] | None:
    data = tree.read(path)
    if data is None or len(data) > MAX_WORKFLOW_BYTES:
        return None
    try:
        node = yaml.compose(data.decode(errors="replace"), Loader=LOADER)
    except YAML_FAILURES:
        return None
    budget = [MAX_NODES]
    converted = _convert(node, budget) if node is not None else None
    return converted.value if converted is not None and isinstance(converted.value, dict) else None


def _convert(node: yaml.Node, budget: list[int]) -> _Node | None:
    budget[0] -= 1
    if budget[0] < 0:
        return None
    line = node.start_mark.line + 1
    if isinstance(node, yaml.ScalarNode):
        return _Node(str(node.value), line, node.style in ("|", ">"))
    if isinstance(node, yaml.SequenceNode):
        items = [c for c in (_convert(v, budget) for v in node.value) if c is not None]
        return _Node(items, line)
    if isinstance(node, yaml.MappingNode):
        out: dict[str, _Node] = {}
        for key, value in node.value:
            converted = _convert(value, budget)
            if isinstance(key, yaml.ScalarNode) and converted is not None:
                out[str(key.value)] = converted
        return _Node(out, line)
    return None


def _get(mapping: Any, *keys: str) -> Any:
    """The value at `keys` in nested `_Node` mappings, or None."""
    for key in keys:
        if not isinstance(mapping, dict) or key not in mapping:
            return None
        mapping = mapping[key].value
    return mapping


def _triggers(doc: Mapping[str, _Node]) -> tuple[frozenset[str], tuple[str, ...]]:
    on = _get(doc, "on")
    if isinstance(on, str):
        return frozenset({on}), ()
    if isinstance(on, list):
        return frozenset(n.value for n in on if isinstance(n.value, str)), ()
    if isinstance(on, dict):
        branches = _get(on, "push", "branches")
        names = (
            tuple(n.value for n in branches if isinstance(n.value, str))
            if isinstance(branches, list)
            else ()
        )
        return frozenset(on), names
    return frozenset(), ()


def _defaults(doc: Mapping[str, _Node]) -> dict[str, str]:
    inputs = _get(doc, "on", "workflow_call", "inputs") or _get(
        doc, "on", "workflow_dispatch", "inputs"
    )
    if not isinstance(inputs, dict):
        return {}
    found = {}
    for name, spec in inputs.items():
        default = _get({"x": spec}, "x", "default")
        found[name] = default if isinstance(default, str) else UNKNOWN
    return found


def _calls(doc: Mapping[str, _Node]) -> Iterator[tuple[str, dict[str, _Node]]]:
    """(called workflow's path, the calling job) for each job that calls one of this repository."""
    jobs = _get(doc, "jobs")
    for job in (jobs or {}).values() if isinstance(jobs, dict) else ():
        uses = _get({"j": job}, "j", "uses")
        match = LOCAL_WORKFLOW_RE.match(uses) if isinstance(uses, str) else None
        if match is not None and isinstance(job.value, dict):
            yield match.group(1), job.value


def _steps(
    parsed: Mapping[str, dict[str, _Node]],
    path: str,
    doc: Mapping[str, _Node],
    inputs: Mapping[str, str],
    on: frozenset[str],
    branches: tuple[str, ...],
    depth: int,
) -> list[Step]:
    env = _env(_get(doc, "env"), inputs, {})
    steps: list[Step] = []
    jobs = _get(doc, "jobs")
    for job_id, job in jobs.items() if isinstance(jobs, dict) else ():
        if not isinstance(job.value, dict):
            continue
        job_env = _env(_get(job.value, "env"), inputs, env)
        for item in _get(job.value, "steps") or ():
            if isinstance(item.value, dict):
                steps.append(_step(path, job_id, item, inputs, job_env, on, branches))
    if depth < MAX_CALL_DEPTH:
        for called, job in _calls(doc):
            if called in parsed:
                given = _env(_get(job, "with"), inputs, env)
                merged = {**_defaults(parsed[called]), **given}
                steps += _steps(parsed, called, parsed[called], merged, on, branches, depth + 1)
    return steps


def _step(
    path: str,
    job: str,
    item: _Node,
    inputs: Mapping[str, str],
    env: Mapping[str, str],
    on: frozenset[str],
    branches: tuple[str, ...],
) -> Step:
    spec = item.value
    step_env = _env(_get(spec, "env"), inputs, env)
    run, uses, name = _get(spec, "run"), _get(spec, "uses"), _get(spec, "name")
    script = spec.get("run")
    line = item.line if script is None else script.line + script.block
    return Step(
        workflow=path,
        line=line,
        job=job,
        name=substitute(name, inputs, step_env) if isinstance(name, str) else "",
        run=substitute(run, inputs, step_env) if isinstance(run, str) else None,
        uses=uses if isinstance(uses, str) else None,
        with_=_env(_get(spec, "with"), inputs, step_env),
        env=step_env,
        on=on,
        branches=branches,
    )


def _env(mapping: Any, inputs: Mapping[str, str], outer: Mapping[str, str]) -> dict[str, str]:
    """`outer` with `mapping`'s entries added, their expressions filled in."""
    env = dict(outer)
    if isinstance(mapping, dict):
        for key, node in mapping.items():
            if isinstance(node.value, str):
                env[key] = substitute(node.value, inputs, env)
    return env


def substitute(text: str, inputs: Mapping[str, str], env: Mapping[str, str]) -> str:
    """`text` with each `${{ expression }}` GitHub would fill in replaced by its value."""
    out, at = [], 0
    while (start := text.find("${{", at)) >= 0:
        end = text.find("}}", start + 3)
        if end < 0:  # never closed: nothing after it is an expression (one pass, however long)
            break
        out += [text[at:start], _evaluate(text[start + 3 : end].strip(), inputs, env)]
        at = end + 2
    return "".join(out) + text[at:]


def _evaluate(expression: str, inputs: Mapping[str, str], env: Mapping[str, str]) -> str:
    head, _, name = expression.partition(".")
    if head == "inputs" and name in inputs:
        return inputs[name]
    if head == "env" and name in env:
        return env[name]
    if expression in ("true", "false"):
        return expression
    if len(expression) >= 2 and expression[0] == expression[-1] == "'":
        return expression[1:-1]
    return UNKNOWN
