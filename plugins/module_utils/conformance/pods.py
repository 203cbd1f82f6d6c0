# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The pods the conformance tests run: a pause container (it only waits) and a probe that lists
the GPU device files it sees; both admitted by Pod Security "restricted"."""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.job import SECURITY_CONTEXT
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.common import RUN_LABEL, Settings

# Not less CPU: runc starts the container inside its cgroup, and under a 10m limit a pause
# container took 111 s to be Ready on the lab (2 s under 100m).
SMALL = {"cpu": "100m", "memory": "16Mi"}
# The probe starts an interpreter or a shell, which needs more for its moment.
PROBE = {"cpu": "250m", "memory": "128Mi"}
# The pause image's own user; the probe image's user may be anything non-root.
PAUSE_USER = 65535
DEVICE_PREFIX = "/dev/nvidia"


def pause_pod(
    settings: Settings,
    name: str,
    gpus: int = 0,
    claim: str = "",
    labels: Optional[dict[str, str]] = None,  # noqa: UP045
) -> dict[str, Any]:
    """A pod that waits (the pause image), asking for `gpus` GPUs or for ResourceClaim `claim`."""
    resources: dict[str, Any] = {"requests": dict(SMALL), "limits": dict(SMALL)}
    if gpus:
        for side in ("requests", "limits"):
            resources[side][settings.gpu_resource] = str(gpus)
    container: dict[str, Any] = {
        "name": "pause",
        "image": settings.pause_image,
        "imagePullPolicy": "IfNotPresent",
        "resources": resources,
        "securityContext": {**SECURITY_CONTEXT, "runAsUser": PAUSE_USER, "runAsGroup": PAUSE_USER},
    }
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 0,
        "containers": [container],
    }
    if claim:
        container["resources"]["claims"] = [{"name": "gpu"}]
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {RUN_LABEL: settings.run, **(labels or {})}},
        "spec": spec,
    }


def probe_pod(settings: Settings, name: str, node: str, gpus: int) -> dict[str, Any]:
    """The probe on `node` (tolerating its taints), asking for `gpus` GPUs; its log lists the
    /dev/nvidia* files it sees."""
    pod = pause_pod(settings, name, gpus)
    container = pod["spec"]["containers"][0]
    container.update(name="probe", image=settings.probe_image, command=list(settings.probe_command))
    for side in ("requests", "limits"):
        container["resources"][side].update(PROBE)
    container["securityContext"] = dict(SECURITY_CONTEXT)
    pod["spec"]["nodeName"] = node
    pod["spec"]["tolerations"] = [{"operator": "Exists"}]
    return pod


def devices_in(log: str) -> list[str]:
    """The GPU device files a probe's log lists."""
    return [line.strip() for line in log.splitlines() if line.strip().startswith(DEVICE_PREFIX)]
