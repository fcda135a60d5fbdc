"""docs/cli.md from the parsers of `chart-review` (bot/cli/main.py's `build_parser` and the
subcommand modules it calls): every subcommand, its usage and every option with its help text.

Usage lines are written here rather than by argparse's formatter, whose wrapping follows the
terminal's width and whose layout changes between Python releases: the page must read the same on
every machine that regenerates it."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from bot.cli.docs_pages.markdown import code, plain, table
from bot.cli.main import PROG, build_parser
from checks.headings.slugs import slug

USAGE_WIDTH = 100
INTRO = """\
What each option means beyond its line of help, the exit statuses, the terminal rendering and the
replay: [cli-guide.md](cli-guide.md). The commands that run the App (`serve`, `worker`) and the
Action (`action`): [app.md](app.md), [action.md](action.md)."""


def body() -> str:
    parser = build_parser()
    commands = _subcommands(parser)
    parts = [
        f"# `{PROG}`: every command and option",
        plain(parser.description or ""),
        plain(parser.epilog or ""),
        INTRO,
        _usage_block(parser),
        _options(parser),
        table(
            ["command", "what it does"],
            [
                (f"[`{name}`](#{slug(f'{PROG} {name}')})", plain(helptext))
                for name, helptext, _ in commands
            ],
        ),
    ]
    for name, helptext, sub in commands:
        parts += [f"## `{PROG} {name}`", _described(helptext, sub), _usage_block(sub)]
        parts.append(_options(sub))
    return "\n\n".join(p.rstrip("\n") for p in parts if p) + "\n"


def _subcommands(
    parser: argparse.ArgumentParser,
) -> list[tuple[str, str, argparse.ArgumentParser]]:
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    helps = {a.dest: a.help or "" for a in sub._choices_actions}
    return [(name, helps.get(name, ""), p) for name, p in sub.choices.items()]


def _described(helptext: str, parser: argparse.ArgumentParser) -> str:
    """The command's line of help, and its description where that says more."""
    description = parser.description or ""
    said = [_sentence(plain(helptext))]
    if description and description != helptext:
        said.append(plain(description))
    if parser.epilog:
        said.append(plain(parser.epilog))
    return "\n\n".join(said)


def _sentence(text: str) -> str:
    text = text.strip()
    return (text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")) if text else ""


def _documented(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        if isinstance(action, argparse._HelpAction):
            continue  # argparse's own -h, in every usage line
        yield action


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return str(action.metavar)
    if action.choices is not None:
        return "{" + ",".join(str(c) for c in action.choices) + "}"
    return action.dest.upper() if action.option_strings else action.dest


def _takes_value(action: argparse.Action) -> bool:
    return action.nargs != 0


def _spelled(action: argparse.Action, option: str) -> str:
    return f"{option} {_metavar(action)}" if _takes_value(action) else option


def _positional(action: argparse.Action) -> str:
    name = _metavar(action)
    return {"*": f"[{name} ...]", "?": f"[{name}]", "+": f"{name} [{name} ...]"}.get(
        str(action.nargs), name
    )


def _usage_token(action: argparse.Action) -> str:
    if not action.option_strings:
        return _positional(action)
    spelled = _spelled(action, action.option_strings[0])
    return spelled if action.required else f"[{spelled}]"


def _usage_tokens(parser: argparse.ArgumentParser) -> list[str]:
    grouped = {id(a): g for g in parser._mutually_exclusive_groups for a in g._group_actions}
    tokens, done = ["[-h]"], set()
    for action in _documented(parser):
        group = grouped.get(id(action))
        if group is None:
            tokens.append(_usage_token(action))
        elif id(group) not in done:
            done.add(id(group))
            inner = " | ".join(_spelled(a, a.option_strings[0]) for a in group._group_actions)
            tokens.append(f"({inner})" if group.required else f"[{inner}]")
    if any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
        tokens.append("COMMAND ...")
    # argparse's order: options first, positionals last.
    options = [t for t in tokens if t.startswith(("[-", "-", "(", "[--"))]
    return options + [t for t in tokens if t not in options]


def _usage_block(parser: argparse.ArgumentParser) -> str:
    head = f"usage: {parser.prog}"
    lines, line = [], head
    for token in _usage_tokens(parser):
        if len(line) + 1 + len(token) > USAGE_WIDTH and line.strip() != head:
            lines.append(line)
            line = " " * len(head)
        line += " " + token
    lines.append(line)
    return "```text\n" + "\n".join(lines) + "\n```"


def _options(parser: argparse.ArgumentParser) -> str:
    rows = [
        (
            ", ".join(
                code(_spelled(a, o) if a.option_strings else _positional(a))
                for o in (a.option_strings or [a.dest])
            ),
            _default(a),
            _help(a, parser.prog),
        )
        for a in _documented(parser)
    ]
    return table(["option", "default", "meaning"], rows) if rows else ""


def _default(action: argparse.Action) -> str:
    if action.required and action.option_strings:
        return "required"
    value = action.default
    if not _takes_value(action) or value in (None, "", [], argparse.SUPPRESS):
        return ""
    return code(str(value))


def _help(action: argparse.Action, prog: str) -> str:
    text = action.help or ""
    if "%" in text:
        # As argparse expands it: `%(default)s` and the like.
        params = {k: v for k, v in vars(action).items() if v is not argparse.SUPPRESS}
        text = text % {**params, "prog": prog}
    if action.choices is not None and action.metavar is not None:
        text += f" (one of: {', '.join(str(c) for c in action.choices)})"
    return plain(text)
