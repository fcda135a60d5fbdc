"""Template lines: a finding points at the culprit field's line inside its container's list item,
however the item is written (`- name:` first or not, `- ` at the key's indent, a templated name)."""

from __future__ import annotations

import textwrap

from bot.model.manifests import ROLE_CONTAINER, ROLE_INIT
from checks.kit.template_lines import container_line, key_pattern, list_items

RUN_AS_USER = key_pattern("runAsUser")
SECURITY = key_pattern("securityContext")
# Long enough that the container's fields sit a hundred lines below its `- image:`.
ENV = "".join(f'            - name: SETTING_{n}\n              value: "{n}"\n' for n in range(50))
IMAGE_FIRST = textwrap.dedent(
    """\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
    spec:
      template:
        spec:
          containers:
            - image: example/web:1
              imagePullPolicy: IfNotPresent
              env:
                ENV_ENTRIES
              name: web
              ports:
                - name: web
                  containerPort: 8080
              securityContext:
                runAsNonRoot: true
                runAsUser: 1000
            - name: sidecar
              image: example/sidecar:1
              securityContext:
                runAsUser: 1001
    """
).replace("        ENV_ENTRIES\n", ENV)


def number_of(source: str, text: str, occurrence: int = 1) -> int:
    return [n for n, line in enumerate(source.splitlines(), 1) if text in line][occurrence - 1]


def test_a_container_item_opening_with_image_is_that_container() -> None:
    line = container_line(IMAGE_FIRST, "web", RUN_AS_USER, SECURITY)
    assert line == 118 == number_of(IMAGE_FIRST, "runAsUser: 1000")


def test_the_next_item_is_its_own_container() -> None:
    line = container_line(IMAGE_FIRST, "sidecar", RUN_AS_USER, SECURITY)
    assert line == number_of(IMAGE_FIRST, "runAsUser: 1001") == 122


def test_the_items_span_their_lines_and_carry_their_own_names() -> None:
    items = list_items(IMAGE_FIRST, "containers")
    assert [(i.key, i.start, i.end, i.name) for i in items] == [
        ("containers", 9, 118, "web"),
        ("containers", 119, 122, "sidecar"),
    ]


def test_a_container_named_only_by_the_workload_s_metadata_is_not_found() -> None:
    """Neither `metadata.name: web` on line 4 nor the port named web is the container: no line
    beats a wrong one."""
    source = IMAGE_FIRST.replace("          name: web\n", "          name: {{ .Values.name }}\n")
    source = source.replace("- name: sidecar", "- name: {{ .Values.sidecar }}")
    assert container_line(source, "web", RUN_AS_USER) is None


def test_the_only_item_with_a_templated_name_is_the_container_rendered_from_it() -> None:
    source = IMAGE_FIRST.replace("          name: web\n", "          name: {{ .Chart.Name }}\n")
    assert container_line(source, "web", RUN_AS_USER) == number_of(source, "runAsUser: 1000")


def test_items_may_sit_at_the_list_key_s_indent_among_directives() -> None:
    source = textwrap.dedent(
        """\
        spec:
          containers:
          - image: example/web:1
            args:
            - --verbose
        {{- if .Values.debug }}
            - --debug
        {{- end }}
            name: main
            securityContext:
              {{- toYaml .Values.securityContext | nindent 10 }}
          dnsPolicy: ClusterFirst
        """
    )
    assert container_line(source, "main", RUN_AS_USER, SECURITY) == 10


def test_the_role_picks_the_list_when_two_containers_share_a_name() -> None:
    source = textwrap.dedent(
        """\
        spec:
          initContainers:
            - name: web
              securityContext:
                runAsUser: 0
          containers:
            - name: web
              securityContext:
                runAsUser: 1000
        """
    )
    assert container_line(source, "web", RUN_AS_USER, role=ROLE_INIT) == 5
    assert container_line(source, "web", RUN_AS_USER, role=ROLE_CONTAINER) == 9


def test_without_a_container_list_a_name_item_still_opens_the_container() -> None:
    source = textwrap.dedent(
        """\
        containers:
          {{- include "app.containers" . | nindent 2 }}
        extra:
          - name: web
            securityContext:
              runAsUser: 1000
        """
    )
    assert container_line(source, "web", RUN_AS_USER) == 6
