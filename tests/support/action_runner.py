"""action.yml's steps run as a GitHub Actions runner runs a composite action: each `run:` step with
`bash --noprofile --norc -eo pipefail` in the workspace, its own GITHUB_OUTPUT file read back as the
step's outputs, every `${{ }}` and `if:` evaluated against the `inputs`, `github`, `runner` and
`steps` contexts; `actions/cache/restore` and `actions/cache/save` against a directory of saved
paths named by their keys, as the cache service keys them. Only the expressions action.yml uses are
understood: another one is an error, not a guess."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||!|\(|\))|(?P<path>[A-Za-z_][\w.-]*))"
)
BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]
CACHE_ACTIONS = ("actions/cache/restore@", "actions/cache/save@")
STEP_TIMEOUT = 900


class ExpressionError(Exception):
    """An expression this runner does not understand: action.yml uses something new."""


@dataclass
class StepRun:
    name: str
    ran: bool
    code: int = 0
    stdout: str = ""
    stderr: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass
class ActionRun:
    steps: list[StepRun]
    outputs: dict[str, str]

    @property
    def code(self) -> int:
        return next((s.code for s in self.steps if s.code), 0)

    def step(self, name: str) -> StepRun:
        return next(s for s in self.steps if s.name == name)


class _Parser:
    """`a.b == 'x' && !c || (d != 'y')` over the contexts: strings compare case-insensitively, a
    missing value is '' (GitHub's null, falsy)."""

    def __init__(self, text: str, contexts: Mapping[str, Any]) -> None:
        self.tokens = self._tokenize(text)
        self.contexts = contexts

    @staticmethod
    def _tokenize(text: str) -> list[tuple[str, str]]:
        tokens, pos = [], 0
        while pos < len(text.rstrip()):
            match = TOKEN.match(text, pos)
            if match is None or match.end() == pos:
                raise ExpressionError(f"cannot read {text[pos:]!r} in {text!r}")
            kind = next(k for k, v in match.groupdict().items() if v is not None)
            tokens.append((kind, match.group(kind)))
            pos = match.end()
        return tokens

    def parse(self) -> Any:
        value = self._or()
        if self.tokens:
            raise ExpressionError(f"unexpected {self.tokens[0][1]!r}")
        return value

    def _take(self, op: str) -> bool:
        if self.tokens and self.tokens[0] == ("op", op):
            self.tokens.pop(0)
            return True
        return False

    def _or(self) -> Any:
        value = self._and()
        while self._take("||"):
            right = self._and()
            value = value or right
        return value

    def _and(self) -> Any:
        value = self._unary()
        while self._take("&&"):
            right = self._unary()
            value = value and right
        return value

    def _unary(self) -> Any:
        if self._take("!"):
            return not self._unary()
        left = self._atom()
        for op in ("==", "!="):
            if self._take(op):
                same = str(left).lower() == str(self._atom()).lower()
                return same if op == "==" else not same
        return left

    def _atom(self) -> Any:
        if not self.tokens:
            raise ExpressionError("an expression ends too soon")
        kind, text = self.tokens.pop(0)
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if (kind, text) == ("op", "("):
            value = self._or()
            if not self._take(")"):
                raise ExpressionError("a ( is not closed")
            return value
        if kind == "path":
            return self._lookup(text)
        raise ExpressionError(f"unexpected {text!r}")

    def _lookup(self, path: str) -> Any:
        if path in ("true", "false"):
            return path == "true"
        head, *rest = path.split(".")
        if head not in self.contexts:
            raise ExpressionError(f"unknown context {head!r} in {path!r}")
        value: Any = self.contexts[head]
        for part in rest:
            value = value.get(part, "") if isinstance(value, Mapping) else ""
        return value


def evaluate(text: str, contexts: Mapping[str, Any]) -> Any:
    return _Parser(text, contexts).parse()


def _as_text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def substitute(text: str, contexts: Mapping[str, Any]) -> str:
    """Every `${{ }}` in `text`, replaced by its value."""
    return EXPRESSION.sub(lambda m: _as_text(evaluate(m.group(1), contexts)), text)


def expressions(action_yml: Path) -> list[str]:
    """Every expression the file holds: in `${{ }}` and in each step's `if:`."""
    action = yaml.safe_load(action_yml.read_text())
    found = EXPRESSION.findall(action_yml.read_text())
    found += [str(s["if"]) for s in action["runs"]["steps"] if "if" in s]
    return found


def read_outputs(path: Path) -> dict[str, str]:
    """A GITHUB_OUTPUT file: `name=value` lines and `name<<DELIMITER` blocks."""
    lines = path.read_text().splitlines() if path.exists() else []
    outputs: dict[str, str] = {}
    while lines:
        line = lines.pop(0)
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            block = []
            while lines and lines[0] != delimiter:
                block.append(lines.pop(0))
            lines.pop(0) if lines else None
            outputs[name] = "\n".join(block)
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


@dataclass
class Runner:
    """One job's runner: its environment (GITHUB_*, RUNNER_*), workspace and cache service."""

    action_dir: Path
    environ: dict[str, str]
    cache_store: Path  # the cache service: one directory per saved key

    def run(self, inputs: Mapping[str, str]) -> ActionRun:
        action = yaml.safe_load((self.action_dir / "action.yml").read_text())
        given = {
            name: inputs.get(name, str(spec.get("default", "")))
            for name, spec in action["inputs"].items()
        }
        contexts: dict[str, Any] = {"steps": {}, "github": self._github(), "runner": self._runner()}
        contexts["inputs"] = {n: substitute(v, contexts) for n, v in given.items()}
        done: list[StepRun] = []
        for index, step in enumerate(action["runs"]["steps"]):
            name = step.get("name", f"step {index}")
            failed = any(s.code for s in done)
            if failed or ("if" in step and not evaluate(str(step["if"]), contexts)):
                done.append(StepRun(name, ran=False))
                continue
            record = self._step(step, name, contexts)
            done.append(record)
            if "id" in step:
                contexts["steps"][step["id"]] = {"outputs": record.outputs}
        outputs = {n: substitute(str(o["value"]), contexts) for n, o in action["outputs"].items()}
        return ActionRun(done, outputs)

    def _github(self) -> dict[str, str]:
        return {
            "action_path": str(self.action_dir),
            "workspace": self.environ["GITHUB_WORKSPACE"],
            "token": self.environ.get("GITHUB_TOKEN", ""),
        }

    def _runner(self) -> dict[str, str]:
        return {
            "temp": self.environ["RUNNER_TEMP"],
            "tool_cache": self.environ["RUNNER_TOOL_CACHE"],
            "os": self.environ.get("RUNNER_OS", "Linux"),
            "arch": self.environ.get("RUNNER_ARCH", "X64"),
        }

    def _step(self, step: Mapping[str, Any], name: str, contexts: Mapping[str, Any]) -> StepRun:
        started = time.perf_counter()
        if "uses" in step:
            with_ = {k: substitute(str(v), contexts) for k, v in (step.get("with") or {}).items()}
            record = self._uses(str(step["uses"]), with_, name)
        else:
            env = {k: substitute(str(v), contexts) for k, v in (step.get("env") or {}).items()}
            record = self._bash(substitute(str(step["run"]), contexts), env, name)
        record.seconds = time.perf_counter() - started
        return record

    def _bash(self, script: str, env: Mapping[str, str], name: str) -> StepRun:
        with tempfile.TemporaryDirectory(dir=self.environ["RUNNER_TEMP"]) as scratch:
            script_file, output = Path(scratch) / "step.sh", Path(scratch) / "output"
            script_file.write_text(script)
            proc = subprocess.run(
                [*BASH, str(script_file)],
                env={**self.environ, **env, "GITHUB_OUTPUT": str(output)},
                cwd=self.environ["GITHUB_WORKSPACE"],
                capture_output=True,
                text=True,
                timeout=STEP_TIMEOUT,
                check=False,
            )
            return StepRun(
                name, True, proc.returncode, proc.stdout, proc.stderr, read_outputs(output)
            )

    def _uses(self, uses: str, with_: Mapping[str, str], name: str) -> StepRun:
        """actions/cache/restore and /save: a path saved once per key, restored where it was."""
        path, saved = Path(with_["path"]), self.cache_store / with_["key"]
        if uses.startswith(CACHE_ACTIONS[0]):
            hit = saved.is_dir()
            if hit:
                shutil.copytree(saved, path, symlinks=True, dirs_exist_ok=True)
            outputs = {"cache-hit": _as_text(hit), "cache-primary-key": with_["key"]}
            return StepRun(name, True, outputs=outputs)
        if uses.startswith(CACHE_ACTIONS[1]):
            if saved.exists():  # a key is saved once: GitHub refuses to overwrite it, and warns
                return StepRun(name, True, stdout=f"Cache already exists for key {saved.name}")
            shutil.copytree(path, saved, symlinks=True)
            return StepRun(name, True)
        raise ExpressionError(f"this runner does not run {uses}")
