"""Label selectors in rendered scripts: `kubectl … -l k=v` / `--selector=…` in a ConfigMap value or
a container's command and args, with the namespace and the kinds each one selects.

Only what can be evaluated is returned: a selector or namespace left to the shell (`$APP`), or a
resource type the chart does not render (a CRD), is skipped rather than guessed."""

from __future__ import annotations

import re
import shlex
from typing import NamedTuple

from bot.textlines import git_lines
from checks.selectors.labels import Selector, parse_selector

KUBECTL = re.compile(r"(?<![\w./-])kubectl(?![\w-])")
PUNCTUATION = frozenset("();<>|&")
POD = "Pod"
ANY = "*"  # `kubectl get all`: pods and every labelled object
# Verbs that act on pods whatever follows them; verbs whose resource type is their third word.
POD_VERBS = frozenset({"logs", "exec", "attach", "port-forward", "cp"})
TWO_WORD_VERBS = frozenset({"rollout", "set"})
RESOURCE_KINDS = {
    **dict.fromkeys(("po", "pod", "pods"), POD),
    **dict.fromkeys(("deploy", "deployment", "deployments"), "Deployment"),
    **dict.fromkeys(("sts", "statefulset", "statefulsets"), "StatefulSet"),
    **dict.fromkeys(("ds", "daemonset", "daemonsets"), "DaemonSet"),
    **dict.fromkeys(("rs", "replicaset", "replicasets"), "ReplicaSet"),
    **dict.fromkeys(("job", "jobs"), "Job"),
    **dict.fromkeys(("cj", "cronjob", "cronjobs"), "CronJob"),
    **dict.fromkeys(("svc", "service", "services"), "Service"),
    **dict.fromkeys(("cm", "configmap", "configmaps"), "ConfigMap"),
    **dict.fromkeys(("secret", "secrets"), "Secret"),
    **dict.fromkeys(
        ("pvc", "persistentvolumeclaim", "persistentvolumeclaims"), "PersistentVolumeClaim"
    ),
    **dict.fromkeys(("pdb", "poddisruptionbudget", "poddisruptionbudgets"), "PodDisruptionBudget"),
    "all": ANY,
}
# kubectl flags that take the next word as their value (so it is not a verb or resource type).
VALUE_FLAGS = frozenset(
    {
        "-o", "--output", "-c", "--container", "--field-selector", "--context", "--kubeconfig",
        "-f", "--filename", "--timeout", "--for", "--since", "--tail", "-p", "--patch", "--type",
        "--template", "--sort-by", "--cluster", "--user", "-s", "--server", "--token",
        "--grace-period", "--replicas", "--cascade", "--max-log-requests",
    }
)  # fmt: skip


class ScriptSelector(NamedTuple):
    text: str  # as written
    selector: Selector
    namespace: str | None  # None: the namespace of the object holding the script
    all_namespaces: bool  # -A, or a namespace left to the shell
    kinds: frozenset[str]  # POD, ANY, or kinds whose own labels are selected


class _Command(NamedTuple):
    words: list[str]
    selector: str | None
    namespace: str | None
    all_namespaces: bool


def kubectl_selectors(script: str) -> list[ScriptSelector]:
    """Every evaluable `-l`/`--selector` of every kubectl command in `script`."""
    found = []
    for line in git_lines(script.replace("\\\n", " ")):
        for match in KUBECTL.finditer(line):
            found += _evaluable(_command(_words(_quoted_rest(line, match.end()))))
    return found


def _quoted_rest(line: str, start: int) -> str:
    """The command text from `start`: when kubectl stands inside a quoted string (a script that
    prints the command it suggests, `log "  kubectl get pods -l app=x"`), only up to the quote
    that closes it, so that quote does not leave the last word unread."""
    quote = _open_quote(line, start)
    if quote is None:
        return line[start:]
    end, i = len(line), start
    while i < len(line):
        if line[i] == "\\" and quote == '"':
            i += 2
            continue
        if line[i] == quote:
            end = i
            break
        i += 1
    return line[start:end]


def _open_quote(line: str, pos: int) -> str | None:
    """The shell quote character open at `pos` of `line`, if any."""
    quote: str | None = None
    i = 0
    while i < pos:
        char = line[i]
        if char == "\\" and quote != "'":  # escapes the next character, outside single quotes
            i += 2
            continue
        if quote is None and char in "'\"":
            quote = char
        elif char == quote:
            quote = None
        i += 1
    return quote


def argv_selectors(argv: list[str]) -> list[ScriptSelector]:
    """The selectors of a container's command and args: an argv that runs kubectl itself, and any
    script among its words (`sh -c "kubectl …"`)."""
    found = []
    if argv and argv[0].rsplit("/", 1)[-1] == "kubectl":
        found += _evaluable(_command(argv[1:]))
    for word in argv:
        found += kubectl_selectors(word)
    return found


def _evaluable(command: _Command) -> list[ScriptSelector]:
    if command.selector is None:
        return []
    selector, kinds = parse_selector(command.selector), _kinds(command.words)
    if selector is None or kinds is None:
        return []
    unresolved = command.namespace is not None and "$" in command.namespace
    return [
        ScriptSelector(
            command.selector,
            selector,
            None if unresolved else command.namespace,
            command.all_namespaces or unresolved,
            kinds,
        )
    ]


def _words(text: str) -> list[str]:
    """The words of one command, up to the shell punctuation that ends it."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = []
    try:
        for word in lexer:
            if set(word) <= PUNCTUATION:
                break
            words.append(word)
    except ValueError:  # an unbalanced quote: keep what was read
        pass
    return words


def _command(args: list[str]) -> _Command:
    words: list[str] = []
    selector = namespace = None
    all_namespaces = False
    i = 0
    while i < len(args):
        arg, following = args[i], args[i + 1] if i + 1 < len(args) else None
        i += 1
        if arg in ("-l", "--selector"):
            selector, i = following, i + 1
        elif arg.startswith("--selector="):
            selector = arg.partition("=")[2]
        elif arg.startswith("-l") and not arg.startswith("--"):
            selector = arg[2:].removeprefix("=")
        elif arg in ("-n", "--namespace"):
            namespace, i = following, i + 1
        elif arg.startswith("--namespace="):
            namespace = arg.partition("=")[2]
        elif arg.startswith("-n") and not arg.startswith("--"):
            namespace = arg[2:].removeprefix("=")
        elif arg in ("-A", "--all-namespaces"):
            all_namespaces = True
        elif arg in VALUE_FLAGS:
            i += 1
        elif not arg.startswith("-"):
            words.append(arg)
    return _Command(words, selector, namespace, all_namespaces)


def _kinds(words: list[str]) -> frozenset[str] | None:
    """What the command selects among: pods for pod verbs; else the kinds of its resource word
    (`pods`, `deploy,sts`, `jobs.batch`); None for a resource type the chart cannot render."""
    if not words:
        return None
    if words[0] in POD_VERBS or (words[0] == "top" and words[1:2] == ["pod"]):
        return frozenset({POD})
    index = 2 if words[0] in TWO_WORD_VERBS else 1
    if len(words) <= index:
        return None
    kinds = set()
    for resource in words[index].lower().split(","):
        kind = RESOURCE_KINDS.get(resource.split(".", 1)[0])
        if kind is None:
            return None
        kinds.add(kind)
    return frozenset(kinds)
