"""The uid check: no pinned runAsUser on a profile where the platform assigns UIDs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.model.report import Finding, Severity, Suggestion
from bot.model.yaml.loader import LOADER
from checks.uid.profiles import _parse_defaults, may_hold_openshift, openshift_flags
from tests.support.pr_review import chart, line_of, review_pr, template

WEB = "Deployment/default/release-web"
DEPLOYMENT = """\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: {{ .Release.Name }}-web
    spec:
      selector:
        matchLabels:
          app: web
      template:
        metadata:
          labels:
            app: web
        spec:
          %(pod)s
          initContainers:
            - name: migrate
              image: example/web:1
              %(init)s
          containers:
            - name: web
              image: example/web:1
              securityContext:
                runAsNonRoot: true
                %(web)s
              %(volume_mount)s
          %(volumes)s
    """
SCC = """\
    {{- if .Values.scc }}
    apiVersion: security.openshift.io/v1
    kind: SecurityContextConstraints
    metadata:
      name: {{ .Release.Name }}-scc
    runAsUser:
      type: MustRunAsRange
    {{- end }}
    """
MARKED = """\
    profiles:
      - name: oc
        arbitrary_uid: true
    """
PROFILES = {"oc": "{}\n", "eks": "{}\n"}
WHY_MARKED = "is marked `arbitrary_uid` in config"
HOST = {
    "volume_mount": "volumeMounts: [{name: host, mountPath: /host}]",
    "volumes": "volumes: [{name: host, hostPath: {path: /var/log}}]",
}


def deployment(**parts: str) -> str:
    fields = {"pod": "", "init": "", "web": "", "volume_mount": "", "volumes": ""}
    return DEPLOYMENT % {**fields, **parts}


def files(profiles: dict[str, str] = PROFILES, **parts: str) -> dict[str, str]:
    return chart({"web.yaml": deployment(**parts), "scc.yaml": SCC}, profiles)


def message(who: str, uid: int, why: str, refusals: str = "") -> str:
    return (
        f"{WEB}: {who} sets runAsUser: {uid}, but the profile {why}, so the platform assigns UIDs: "
        f"service account default/default may use no SCC that admits UID {uid}{refusals}, so "
        "OpenShift's restricted-v2 SCC applies and rejects a pinned UID: the pod fails admission "
        "and stays Pending. Drop runAsUser (runAsNonRoot: true is allowed), or grant the service "
        "account an SCC that admits it."
    )


def test_a_container_pinning_runasuser_on_a_marked_profile_fails(tmp_path: Path) -> None:
    head = files(web="runAsUser: 1000")
    found = review_pr(tmp_path, files(), head, "uid", MARKED)
    pinned = line_of(head, template("web.yaml"), "runAsUser: 1000")
    # The line's removal is offered, verified by a render of the patched head on oc.
    remove = Suggestion(template("web.yaml"), pinned, pinned, "", verified_on=("oc",))
    assert found == [
        Finding(
            check="uid",
            severity=Severity.FAILURE,
            rule="pinned-uid",
            title=f"{WEB}: container web pins runAsUser on oc",
            message="profile oc: " + message("container web", 1000, WHY_MARKED),
            chart="app",
            profile="oc",
            subject=WEB,
            path=template("web.yaml"),
            line=line_of(head, template("web.yaml"), "runAsUser: 1000"),
            data={
                "container": "web",
                "detail": "runAsUser",
                "profiles": ["oc"],
                "run_as_user": 1000,
                "reason": WHY_MARKED,
                "scc": "restricted-v2",
            },
            suggestion=remove,
        )
    ]


def test_run_as_non_root_alone_is_fine(tmp_path: Path) -> None:
    base = files(web="runAsUser: 1000")
    assert review_pr(tmp_path, base, files(), "uid", MARKED) == []


def test_an_openshift_value_marks_the_profile_and_a_pod_level_uid_fails(tmp_path: Path) -> None:
    profiles = {"oc": "global:\n  openshift: true\n", "eks": "{}\n"}
    head = files(profiles, pod="securityContext: {runAsUser: 1001}")
    (found,) = review_pr(tmp_path, files(profiles), head, "uid")
    why = "sets `global.openshift: true` in its values"
    assert (found.severity, found.rule, found.profile, found.subject, found.line) == (
        Severity.FAILURE,
        "pinned-uid",
        "oc",
        WEB,
        line_of(head, template("web.yaml"), "runAsUser: 1001"),
    )
    assert found.message == "profile oc: " + message("pod securityContext", 1001, why)
    assert found.data["container"] is None


def test_a_rendered_scc_marks_the_profile_and_an_init_container_uid_fails(tmp_path: Path) -> None:
    profiles = {"oc": "scc: true\n", "eks": "{}\n"}
    head = files(profiles, init="securityContext: {runAsUser: 0}")
    (found,) = review_pr(tmp_path, files(profiles), head, "uid")
    assert (found.severity, found.title, found.line) == (
        Severity.FAILURE,
        f"{WEB}: init container migrate pins runAsUser on oc",
        line_of(head, template("web.yaml"), "runAsUser: 0"),
    )
    assert found.data["reason"] == "renders a SecurityContextConstraints"
    why = "renders a SecurityContextConstraints"
    refusals = " (SCC release-scc is not granted to it)"
    assert found.message == "profile oc: " + message("init container migrate", 0, why, refusals)


def test_unmarked_profiles_may_pin_a_uid(tmp_path: Path) -> None:
    assert review_pr(tmp_path, files(), files(web="runAsUser: 1000"), "uid") == []


def test_root_with_a_host_path_is_left_to_the_chart_unless_the_profile_is_marked(
    tmp_path: Path,
) -> None:
    profiles = {"oc": "openshift: true\n", "eks": "{}\n"}
    head = files(profiles, web="runAsUser: 0", **HOST)
    assert review_pr(tmp_path / "auto", files(profiles, **HOST), head, "uid") == []
    (found,) = review_pr(tmp_path / "marked", files(profiles, **HOST), head, "uid", MARKED)
    assert (found.severity, found.profile, found.data["reason"]) == (
        Severity.FAILURE,
        "oc",
        WHY_MARKED,
    )


def test_a_uid_pinned_at_base_already_is_one_notice_for_all_its_profiles(tmp_path: Path) -> None:
    both = (
        "profiles:\n  - name: oc\n    arbitrary_uid: true\n  - name: eks\n    arbitrary_uid: true\n"
    )
    base = files(web="runAsUser: 1000")
    head = files(web="runAsUser: 1000\n                readOnlyRootFilesystem: true")
    (found,) = review_pr(tmp_path, base, head, "uid", both)
    assert (found.severity, found.rule, found.profile, found.title) == (
        Severity.NOTICE,
        "pinned-uid",
        "eks, oc",
        f"{WEB}: container web pins runAsUser on eks, oc (already at base)",
    )
    assert found.message.startswith("profiles eks, oc: ")
    assert found.message.endswith("Already so at base, so not this PR's doing.")
    assert found.line == line_of(head, template("web.yaml"), "runAsUser: 1000")


def test_chart_defaults_enabling_openshift_count_unless_the_profile_turns_it_off(
    tmp_path: Path,
) -> None:
    profiles = {"oc": "{}\n", "eks": "openshift: false\n"}
    base = {**files(profiles), "app/values.yaml": "openshift: true\n"}
    head = {**files(profiles, web="runAsUser: 1000"), "app/values.yaml": "openshift: true\n"}
    (found,) = review_pr(tmp_path, base, head, "uid")
    assert (found.severity, found.profile, found.data["reason"]) == (
        Severity.FAILURE,
        "oc",
        "sets `openshift: true` in its values",
    )


IMAGE_FIRST = """\
    {{- if .Values.enabled }}
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
    spec:
      selector:
        matchLabels:
          app: web
      template:
        metadata:
          labels:
            app: web
        spec:
          containers:
            - image: example/web:1
              env:
%(env)s
              name: web
              securityContext:
                runAsNonRoot: true
                %(web)s
    {{- end }}
    """
# Indented under `env:` once the template is dedented: a hundred lines of the container's fields.
ENV = "".join(
    f'                - name: SETTING_{n}\n                  value: "{n}"\n' for n in range(50)
)


def test_a_pin_in_an_item_opening_with_image_is_reported_at_its_own_line(tmp_path: Path) -> None:
    """The workload's own `name: web` (line 5) is not the container: the runAsUser line is."""

    def image_first(web: str) -> dict[str, str]:
        text = IMAGE_FIRST % {"env": ENV.rstrip("\n"), "web": web}
        return chart({"web.yaml": text}, {"oc": "enabled: true\n"})

    head = image_first("runAsUser: 1000")
    (found,) = review_pr(tmp_path, image_first(""), head, "uid", MARKED)
    assert (found.subject, found.data["container"], found.line) == (
        "Deployment/default/web",
        "web",
        121,
    )
    assert line_of(head, template("web.yaml"), "runAsUser: 1000") == 121


@pytest.mark.parametrize(
    "text",
    [
        "openshift: true\nsecurity:\n  runAsUser: 1000\n",
        "# comments\nbase: &b {openshift: true}\nother: *b\n",  # an alias: weighed, then parsed
        "a: 1\n---\nopenshift: true\n",  # two documents: the first is the values
        "---\nopenshift: true\n",
        "- a list first\n---\nopenshift: true\n",  # the values are that list: none
        "- not a mapping\n",
        "",
        "# only comments\n",
        "a: |\n  text\n\n  more\nb:\n  - x: 1\n    y: [1,\n      2]\n",
        "a: [unclosed\n",  # not YAML: no defaults, as before
    ],
)
def test_a_charts_defaults_are_its_first_document_however_parsed(text: str) -> None:
    try:
        docs = list(yaml.load_all(text, Loader=LOADER))  # noqa: S506 - the safe loader
    except yaml.YAMLError:
        docs = []
    first = docs[0] if docs else {}
    assert repr(_parse_defaults(text)) == repr(first if isinstance(first, dict) else {})


# Keys that lower-case to `openshift`, however YAML spells them: as they read, in any case,
# quoted, complex, anchored, and through escapes of every kind and a line joined by a backslash.
_SPELLINGS = [
    "openshift: true\n",
    "OpenShift: true\n",
    "app:\n  OPENSHIFT: {enabled: true}\n",
    "'openShift': true\n",
    '"openshift": true\n',
    "? openshift\n: true\n",
    "a: &k openshift\n*k : true\n",
    '"\\x6fpenshift": true\n',
    '"\\u004Fpenshift": true\n',
    '"\\U0000006fpenshift": true\n',
    '? "open\\\n  shift"\n: true\n',
    '? "open\\\r\n  shift"\n: true\n',
    '? "open\\\u2028  shift"\n: true\n',
    '{"opens\\x68ift": true}\n',
]


@pytest.mark.parametrize("text", _SPELLINGS)
def test_every_spelling_of_an_openshift_key_is_looked_at(text: str) -> None:
    """values.yaml is parsed for the uid check only where it may hold an `openshift` key: each of
    these does, and is."""
    assert openshift_flags(_parse_defaults(text)), text  # the spelling does make such a key
    assert may_hold_openshift(text)


@st.composite
def _spelled(draw: st.DrawFn) -> str:
    """A double-quoted key that reads `openshift` in some case, its letters maybe escaped, maybe
    split across lines by a backslash; or another key spelled so."""
    word = draw(st.sampled_from(["openshift", "openshift", "enabled", "oc"]))
    escaping = draw(st.booleans())
    out = []
    for char in word:
        code = ord(draw(st.sampled_from([char, char.upper()])))
        form = draw(st.sampled_from(["x", "u", "U"])) if escaping and draw(st.booleans()) else ""
        out.append(
            {"": chr(code), "x": f"\\x{code:02x}", "u": f"\\u{code:04X}"}.get(
                form, f"\\U{code:08x}"
            )
        )
        if draw(st.integers(0, 5)) == 0:
            out.append("\\\n    ")
    return '"' + "".join(out) + '"'


@settings(max_examples=400, deadline=None)
@given(st.lists(_spelled(), min_size=1, max_size=3, unique=True), st.booleans())
def test_a_key_that_may_be_openshift_is_never_missed(keys: list[str], nested: bool) -> None:
    text = "".join(f"? {k}\n: true\n" for k in keys)  # complex keys: they may span lines
    if nested:
        text = "app:\n" + "".join(f"  {line}\n" for line in text.splitlines())
    try:
        flags = openshift_flags(_parse_defaults(text))
    except RecursionError:
        return
    if flags:
        assert may_hold_openshift(text)


def test_a_values_file_without_the_word_is_not_parsed_for_it() -> None:
    text = "image:\n  repository: nginx  # see https://example.com/a\\b\nopen: shift\n"
    assert not may_hold_openshift(text)
    assert may_hold_openshift(text.replace("open: shift", "# OpenShift only"))
