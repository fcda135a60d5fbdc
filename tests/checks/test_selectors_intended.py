"""A kubectl selector in a rendered script that selects nothing: the warning names the labels the
pods it most plausibly meant do carry, and points at the head template's line that writes it.

The first PR is reviewed end to end; the others on a context from the same files
(tests/support/check_context.py)."""

from __future__ import annotations

from pathlib import Path

from bot.model.report import Severity
from checks.selectors.intended import intended
from checks.selectors.labels import Pod, parse_selector
from tests.checks.test_selectors import DEPLOYMENT
from tests.support.check_context import review_files
from tests.support.pr_review import chart, line_of, review_pr, template

SELECTOR = "app.kubernetes.io/component=jobs-manager"
# A script that prints the command it suggests: the selector sits inside a quoted string.
REPORT = """\
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: {{ .Release.Name }}-report
    data:
      report.sh: |
        #!/bin/sh
        log() { echo "$(date) $*"; }
        log "stuck jobs: look at the manager's pods with"
        log "    kubectl get pods -l %(selector)s"
    """
MYSQL = """\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: {{ .Release.Name }}-mysql
    spec:
      selector:
        matchLabels: {app: mysql}
      template:
        metadata:
          labels: {app: mysql, tier: backend}
        spec:
          containers:
            - name: mysql
              image: mysql:8
    """
# A CronJob whose own name resembles the selector: a script never means its own pods.
RESTART = """\
    apiVersion: batch/v1
    kind: CronJob
    metadata:
      name: restart-jobs-manager
    spec:
      schedule: "0 3 * * *"
      jobTemplate:
        spec:
          template:
            metadata:
              labels: {app: restarter}
            spec:
              restartPolicy: OnFailure
              containers:
                - name: restart
                  image: bitnami/kubectl:1.30
                  args:
                    - kubectl
                    - delete
                    - pod
                    - "-l"
                    - "%(selector)s"
    """


def files(selector: str = SELECTOR, **more: str) -> dict[str, str]:
    templates = {
        "deployment.yaml": DEPLOYMENT % {"selector": "manager"},
        "mysql.yaml": MYSQL,
        "report.yaml": REPORT % {"selector": selector},
        **more,
    }
    return chart(templates, {"aks": "{}\n", "eks": "{}\n"})


def test_the_warning_names_what_the_meant_pods_carry_at_the_head_line(tmp_path: Path) -> None:
    head = files()
    base = files(selector="app=manager")  # base's selector did select them
    (found,) = review_pr(tmp_path, base, head, "selectors")
    assert (found.severity, found.rule, found.path, found.line) == (
        Severity.WARNING,
        "script-selector",
        template("report.yaml"),
        line_of(head, template("report.yaml"), SELECTOR),
    )
    assert found.message == (
        "profiles aks, eks: ConfigMap/default/release-report: the kubectl selector "
        f"`{SELECTOR}` in data key report.sh matches no pod rendered in namespace default: no pod "
        "carries app.kubernetes.io/component; it most plausibly means the pods of Deployment "
        "release-jobs-manager (its name has jobs-manager), which carry `app: manager`, "
        "`tier: backend`. The command would act on nothing."
    )
    assert found.data["intended"] == {
        "object": "Deployment/default/release-jobs-manager",
        "labels": {"app": "manager", "tier": "backend"},
    }


def test_labels_the_other_pods_share_come_after_those_that_tell_them_apart() -> None:
    manager = Pod("Deployment", "release-jobs-manager", "default", {"tier": "backend", "app": "m"})
    mysql = Pod("Deployment", "release-mysql", "default", {"tier": "backend", "app": "mysql"})
    selector = parse_selector(SELECTOR)
    assert selector is not None
    meant = intended(selector, [mysql, manager], ("ConfigMap", "report", "default"))
    assert meant is not None and list(meant.labels.items()) == [("app", "m"), ("tier", "backend")]


def test_a_selector_like_no_pod_guesses_nothing() -> None:
    head = files(selector="app.kubernetes.io/component=scheduler")
    (found,) = review_files(files(selector="app=manager"), head, "selectors")
    assert found.data["intended"] is None
    assert "plausibly" not in found.message
    assert "no pod carries app.kubernetes.io/component. The command would act" in found.message


def test_two_pods_as_plausible_guess_nothing() -> None:
    """`tier=backend,app=worker`: both Deployments' pods meet `tier=backend` alike."""
    head = files(selector="tier=backend,app=worker")
    (found,) = review_files(files(selector="app=manager"), head, "selectors")
    assert found.data["intended"] is None and "plausibly" not in found.message


def test_the_script_never_means_its_own_pods_and_an_argv_selector_is_found() -> None:
    head = files(selector="app=manager", **{"restart.yaml": RESTART % {"selector": SELECTOR}})
    (found,) = review_files(files(selector="app=manager"), head, "selectors")
    assert (found.subject, found.line) == (
        "CronJob/default/restart-jobs-manager",
        line_of(head, template("restart.yaml"), SELECTOR),  # `- "<selector>"` in the args list
    )
    assert found.data["intended"]["object"] == "Deployment/default/release-jobs-manager"


def test_a_selector_already_wrong_at_base_points_at_its_head_line() -> None:
    base = files()
    moved = REPORT.replace("#!/bin/sh\n", "#!/bin/sh\n        # how to find the stuck jobs\n")
    head = files(**{"report.yaml": moved % {"selector": SELECTOR}})
    (found,) = review_files(base, head, "selectors")
    assert (found.severity, found.preexisting) == (Severity.NOTICE, True)
    line = line_of(head, template("report.yaml"), SELECTOR)
    assert found.line == line == line_of(base, template("report.yaml"), SELECTOR) + 1
