"""Workload templates as the tests write them: a Deployment of a chart's release and the containers
of its pod, as YAML text in the chart's own layout (a template file's text, or what Helm renders
of it), so that a test names only what it is about.

    deployment("web", container("web", requests=SMALL, limits=SMALL))

is the Deployment `{{ .Release.Name }}-web`, selecting and labelling its pods `app: web`, with one
container `web` of image `example/web:1` that requests and limits 100m CPU and 64Mi of memory. A
container is a list item at the indent of a pod template's `containers:`, so a test may add one
to a template's text by concatenation, as a PR adds a sidecar at the end of the file."""

from __future__ import annotations

from collections.abc import Mapping

# The pod's QoS class is Guaranteed when every container's limits equal its requests.
SMALL = {"cpu": "100m", "memory": "64Mi"}
# A sidecar's requests, and the limits that leave it without a CPU limit: the pod falls to Burstable.
SHIPPER_REQUESTS = {"cpu": "50m", "memory": "32Mi"}
SHIPPER_LIMITS = {"memory": "32Mi"}
# Under `spec.template.spec.containers:` of a workload: where each container's `- name:` stands.
CONTAINER_INDENT = 8

Quantities = Mapping[str, str]


def container(
    name: str,
    image: str | None = None,
    *,
    requests: Quantities | None = None,
    limits: Quantities | None = None,
) -> str:
    """One container, `- name:` first; its image `example/<name>:1` unless given."""
    lines = [f"- name: {name}", f"  image: {image or f'example/{name}:1'}"]
    if requests or limits:
        lines.append("  resources:")
    for key, quantities in (("requests", requests), ("limits", limits)):
        if quantities:
            lines.append(f"    {key}:")
            lines += [f"      {resource}: {amount}" for resource, amount in quantities.items()]
    pad = " " * CONTAINER_INDENT
    return "".join(f"{pad}{line}\n" for line in lines)


def shipper(name: str = "shipper") -> str:
    """The log-shipping sidecar the QoS tests add: requests, and a memory limit with no CPU one."""
    return container(name, "example/shipper:1", requests=SHIPPER_REQUESTS, limits=SHIPPER_LIMITS)


def deployment(app: str, *containers: str, replicas: str | None = None) -> str:
    """The Deployment `{{ .Release.Name }}-<app>`, its pods labelled and selected `app: <app>`."""
    scale = f"  replicas: {replicas}\n" if replicas is not None else ""
    return (
        "apiVersion: apps/v1\n"
        "kind: Deployment\n"
        "metadata:\n"
        f"  name: {{{{ .Release.Name }}}}-{app}\n"
        "spec:\n"
        f"{scale}"
        "  selector:\n"
        "    matchLabels:\n"
        f"      app: {app}\n"
        "  template:\n"
        "    metadata:\n"
        "      labels:\n"
        f"        app: {app}\n"
        "    spec:\n"
        "      containers:\n" + "".join(containers)
    )


def guaranteed_web(replicas: str | None = None) -> str:
    """The Deployment `web` whose one container's limits equal its requests (QoS Guaranteed)."""
    return deployment("web", container("web", requests=SMALL, limits=SMALL), replicas=replicas)
