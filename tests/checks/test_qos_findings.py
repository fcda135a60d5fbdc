"""The QoS check's other findings: added and removed pods and profiles, render errors, malformed
quantities and ResourceQuota admission."""

from __future__ import annotations

from bot.model.report import Finding, Severity
from checks.qos.check import chart_data, run
from tests.support.qos import CHART, context, docs, failed, rendered

T = f"{CHART}/templates/all.yaml"

WEB_G = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
        - name: web
          resources: {limits: {cpu: 100m, memory: 64Mi}}
"""
WEB_B = WEB_G.replace("limits: {cpu: 100m, memory: 64Mi}", "requests: {cpu: 100m}")
WORKER_BE = """apiVersion: apps/v1
kind: Deployment
metadata: {name: worker}
spec:
  template:
    spec:
      containers:
        - name: worker
"""
QUOTA = """apiVersion: v1
kind: ResourceQuota
metadata: {name: compute}
spec:
  hard: {cpu: "4", limits.memory: 8Gi, pods: "10"}
"""


def _run(base: str | None, head: str | None, profile: str = "eks") -> list[Finding]:
    base_r = {profile: rendered(profile, docs(base, T))} if base is not None else {}
    head_r = {profile: rendered(profile, docs(head, T))} if head is not None else {}
    return run(context(base_r, head_r, {T: base or ""}, {T: head or ""}))


def _summary(findings: list[Finding]) -> list[tuple[str, Severity, str | None, str]]:
    return [(f.rule, f.severity, f.subject, f.message) for f in findings]


def test_new_best_effort_pod_warns_and_added_pod_notes() -> None:
    head = WEB_G + "---\n" + WORKER_BE + "---\n" + WEB_B.replace("name: web}", "name: api}")
    assert _summary(_run(WEB_G, head)) == [
        (
            "added",
            Severity.NOTICE,
            "Deployment/tracebloc/api",
            "profile eks: Deployment/tracebloc/api added, Burstable: container web sets "
            "requests.cpu but no limits.cpu; container web sets neither requests.memory nor "
            "limits.memory.",
        ),
        (
            "new-besteffort",
            Severity.WARNING,
            "Deployment/tracebloc/worker",
            "profile eks: Deployment/tracebloc/worker added, BestEffort: container worker sets no "
            "resources (neither requests nor limits on cpu or memory).",
        ),
    ]


def test_removed_pod_points_at_base() -> None:
    [finding] = _run(WEB_G + "---\n" + WORKER_BE, WEB_G)
    assert _summary([finding]) == [
        (
            "removed",
            Severity.NOTICE,
            "Deployment/tracebloc/worker",
            "profile eks: Deployment/tracebloc/worker removed (was BestEffort).",
        )
    ]
    assert (finding.path, finding.line) == (T, 18)  # `- name: worker` in the base text


def test_two_candidates_are_no_rename() -> None:
    twin = WEB_G.replace("name: web}", "name: web-b}")
    head = WEB_G.replace("name: web}", "name: web-2}") + "---\n" + twin.replace("web-b}", "web-c}")
    rules = sorted(f.rule for f in _run(WEB_G, head))
    assert rules == ["added", "added", "removed"]


def test_profile_added_is_one_notice() -> None:
    [finding] = _run(None, WEB_G + "---\n" + WORKER_BE + "---\n" + WEB_B.replace("web}", "x}"))
    assert (finding.rule, finding.severity, finding.subject) == ("added", Severity.NOTICE, None)
    assert finding.message == "profile eks added: 3 pods (1 BestEffort, 1 Burstable, 1 Guaranteed)."


def test_profile_removed_is_one_notice() -> None:
    [finding] = _run(WEB_G, None)
    assert finding.message == "profile eks removed: 1 pod (1 Guaranteed)."
    assert finding.data == {"base": {"Deployment/tracebloc/web": "Guaranteed"}}


def test_render_error_on_a_side_skips_the_comparison() -> None:
    ctx = context({"eks": failed("eks")}, {"eks": rendered("eks", docs(WORKER_BE, T))})
    assert run(ctx) == []
    assert chart_data(ctx) == {
        "qos": {"base": {}, "head": {"eks": {"Deployment/tracebloc/worker": "BestEffort"}}}
    }
    assert run(context({"eks": rendered("eks", docs(WEB_G, T))}, {"eks": failed("eks")})) == []


def test_unchanged_class_says_nothing_even_when_resources_change() -> None:
    assert _run(WEB_B, WEB_B.replace("cpu: 100m", "cpu: 200m")) == []


BAD = WEB_G.replace("cpu: 100m", "cpu: 1.5cores")


def test_new_malformed_quantity_is_a_failure_naming_container_and_field() -> None:
    [finding] = [f for f in _run(WEB_G, BAD) if f.rule == "bad-quantity"]
    assert finding.severity is Severity.FAILURE
    assert finding.message == (
        "profile eks: Deployment/tracebloc/web: container web limits.cpu is '1.5cores', which is "
        "not a Kubernetes quantity (unknown suffix 'cores'; expected a number with an optional "
        "suffix such as 250m, 0.5, 16Mi, 1Gi, 1G or 1e3); the API server will reject the pod."
    )
    # The line that writes the bad quantity, not the container's first line (issue 40).
    assert (finding.path, finding.line) == (T, 9)


def test_malformed_quantity_already_at_base_is_a_notice() -> None:
    findings = _run(BAD, BAD)
    assert [(f.rule, f.severity, f.preexisting) for f in findings] == [
        ("bad-quantity", Severity.NOTICE, True)
    ]
    assert not _run(WEB_G, BAD)[0].preexisting


def test_quota_without_requests_introduced_by_the_pr_is_a_failure() -> None:
    base = QUOTA + "---\n" + WEB_G
    head = base + "---\n" + WEB_B.replace("name: web}", "name: api}")
    quota = [f for f in _run(base, head) if f.rule == "quota"]
    assert _summary(quota) == [
        (
            "quota",
            Severity.FAILURE,
            "Deployment/tracebloc/api",
            "profile eks: Deployment/tracebloc/api: container web sets no limits.memory, which "
            "ResourceQuota compute in namespace tracebloc requires; the API server will reject "
            "the pod.",
        )
    ]


def test_quota_gap_on_an_init_container_names_every_missing_field() -> None:
    base = QUOTA + "---\n" + WEB_G
    head = base.replace(
        "      containers:", "      initContainers:\n        - name: wait\n      containers:"
    )
    [finding] = [f for f in _run(base, head) if f.rule == "quota"]
    assert (finding.severity, finding.title, finding.line) == (
        Severity.FAILURE,
        "Deployment/tracebloc/web: init container wait lacks limits.memory or requests.cpu "
        "under a ResourceQuota on eks",
        14,
    )
    assert finding.data == {
        "container": "wait",
        "fields": ["limits.memory", "requests.cpu"],
        "new": ["limits.memory", "requests.cpu"],
        "quotas": ["compute"],
    }


def test_quota_gap_already_at_base_is_a_notice() -> None:
    text = QUOTA + "---\n" + WORKER_BE
    quota = [f for f in _run(text, text) if f.rule == "quota"]
    assert [(f.severity, f.message.endswith("This was already so at base.")) for f in quota] == [
        (Severity.NOTICE, True)
    ]
    assert [f.preexisting for f in quota] == [True]  # folded, and a notice whatever the config


def test_quota_in_another_namespace_or_scope_does_not_apply() -> None:
    elsewhere = QUOTA.replace("{name: compute}", "{name: compute, namespace: other}")
    scoped = QUOTA.replace("spec:\n", "spec:\n  scopes: [BestEffort]\n")
    priority = QUOTA.replace(
        "spec:\n",
        "spec:\n  scopeSelector:\n    matchExpressions:\n"
        "      - {scopeName: PriorityClass, operator: In, values: [high]}\n",
    )
    for quota in (elsewhere, scoped, priority):
        assert [f for f in _run(WEB_G, quota + "---\n" + WEB_B) if f.rule == "quota"] == []


def test_limits_alone_satisfy_a_requests_quota() -> None:
    quota = QUOTA.replace('{cpu: "4", limits.memory: 8Gi, pods: "10"}', '{requests.cpu: "4"}')
    assert [f for f in _run(None, quota + "---\n" + WEB_G) if f.rule == "quota"] == []


def test_pod_level_resources_answer_the_quota() -> None:
    pod_level = WEB_B.replace(
        "      containers:", "      resources: {limits: {cpu: '1', memory: 1Gi}}\n      containers:"
    )
    assert [f for f in _run(None, QUOTA + "---\n" + pod_level) if f.rule == "quota"] == []


TEST_POD = """apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations: {{"helm.sh/hook": {hook}}}
spec:
  containers:
    - name: wget
      image: busybox
"""


def test_twin_pods_renamed_in_place_are_renames() -> None:
    """Seen on a real chart: two `helm test` pods of one template, each with one `wget` container,
    renamed `-metrics` → `-metrics-test` and `-webhook` → `-webhook-test`. The signature alone
    cannot pair them; the names can, and nothing was added."""

    def pods(suffix: str) -> str:
        return "---\n".join(
            TEST_POD.format(name=f"op-{n}{suffix}", hook="test") for n in ("metrics", "webhook")
        )

    found = _run(pods(""), pods("-test"))
    assert sorted((f.rule, f.subject) for f in found) == [
        ("renamed", "Pod/tracebloc/op-metrics-test"),
        ("renamed", "Pod/tracebloc/op-webhook-test"),
    ]


def test_a_new_best_effort_helm_test_pod_is_a_notice() -> None:
    [finding] = _run(WEB_G, WEB_G + "---\n" + TEST_POD.format(name="web-test", hook='"test"'))
    assert (finding.rule, finding.severity) == ("new-besteffort", Severity.NOTICE)
    assert finding.message.endswith(
        "It is a `helm test` hook pod, which runs only on `helm test`: a notice, not a finding "
        "about the release."
    )
    assert finding.data["test_hook"] is True


def test_a_new_best_effort_pod_of_another_hook_still_warns() -> None:
    hooked = TEST_POD.format(name="migrate", hook="pre-install,pre-upgrade")
    [finding] = _run(WEB_G, WEB_G + "---\n" + hooked)
    assert (finding.rule, finding.severity) == ("new-besteffort", Severity.WARNING)


def test_a_pod_named_at_random_in_each_render_is_no_rename() -> None:
    """Found on jenkinsci/helm-charts: its test pod is `RELEASE-ui-test-{{ randAlphaNum 5 |
    lower }}`, so every render names it anew and every PR read 'renamed' on every profile. The same
    pod, its class kept: nothing to say. Its class changing is still said."""
    base = TEST_POD.format(name="release-ui-test-4fwxs", hook="test")
    head = TEST_POD.format(name="release-ui-test-ejfro", hook="test")
    assert _run(WEB_G + "---\n" + base, WEB_G + "---\n" + head) == []
    # A rename a chart made (another length, or more than a suffix) is still said.
    renamed = TEST_POD.format(name="release-ui-check-4fwxs", hook="test")
    assert [f.rule for f in _run(base, renamed)] == ["renamed"]
    limited = head.replace(
        "image: busybox", "image: busybox\n      resources: {limits: {cpu: 1, memory: 1Gi}}"
    )
    assert [f.rule for f in _run(base, limited)] == ["upgrade"]
