"""The two pods of node-stage.sh, as JSON for the API server.

`gpurack-validate` asks for `nvidia.com/gpu: 1` and runs `gpurack validate --local --tier
standard` with the host's own Python and PyTorch and gpurack as installed there (read-only host
paths: /usr, the torch site if elsewhere, the unpacked wheels with the driver's, and the
installed collection) in a nearly empty image whose /bin and /lib64 are its own, so that the
CDI device's mounts (`/bin/nvidia-smi`, `/lib64/libcuda.so.*`) land in the image and not in
the read-only host /usr. It tolerates the validating taint, as gpurack's
validation pods do. `no-gpu` asks for nothing and looks for the GPU.

    python3 pods.py TORCH_SITE [--no-gpu]
"""

from __future__ import annotations

import json
import sys
from typing import Any

IMAGE_HOST_PYTHON = "registry.gpurack.lab/host-python:1"
IMAGE_PROBE = "registry.gpurack.lab/gpu-probe:1"
WHEELS = "/opt/gpurack-ansible"
COLLECTIONS = "/opt/gpurack-collections"


def _mount(name: str, path: str, into: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    volume = {"name": name, "hostPath": {"path": path, "type": "Directory"}}
    return volume, {"name": name, "mountPath": into or path, "readOnly": True}


def validate_pod(torch_site: str) -> dict[str, Any]:
    mounts = [_mount("usr", "/usr"), _mount("wheels", WHEELS), _mount("collections", COLLECTIONS)]
    if not torch_site.startswith("/usr/"):
        mounts.append(_mount("torch", torch_site))
    env = {
        "PYTHONPATH": WHEELS + ("" if torch_site.startswith("/usr/") else f":{torch_site}"),
        "ANSIBLE_COLLECTIONS_PATH": COLLECTIONS,
        "GPURACK_STATE_DIR": "/tmp/gpurack",
        "HOME": "/tmp",
        "LC_ALL": "C.UTF-8",
        "PATH": "/bin:/usr/bin:/usr/local/bin",
        "NCCL_NVLS_ENABLE": "0",
        "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    }
    container = {
        "name": "validate",
        "image": IMAGE_HOST_PYTHON,
        "imagePullPolicy": "Never",
        "command": [
            "/usr/bin/python3",
            "-m",
            "gpurack",
            "validate",
            "--local",
            "--tier",
            "standard",
            "--json",
            "--no-record",
        ],
        "env": [{"name": k, "value": v} for k, v in env.items()],
        "resources": {"limits": {"nvidia.com/gpu": 1}},
        "volumeMounts": [m for _, m in mounts],
    }
    return _pod("gpurack-validate", container, [v for v, _ in mounts])


def no_gpu_pod() -> dict[str, Any]:
    container = {
        "name": "probe",
        "image": IMAGE_PROBE,
        "imagePullPolicy": "Never",
        "command": ["/bin/sh", "-c", "ls /dev/nvidia* 2>&1; nvidia-smi -L 2>&1; echo nvidia-smi rc=$?"],
    }
    return _pod("no-gpu", container, [])


def _pod(name: str, container: dict[str, Any], volumes: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "restartPolicy": "Never",
            "automountServiceAccountToken": False,
            "tolerations": [{"key": "gpurack.io/validating", "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [container],
            "volumes": volumes,
        },
    }


if __name__ == "__main__":
    pod = no_gpu_pod() if "--no-gpu" in sys.argv else validate_pod(sys.argv[1])
    print(json.dumps(pod))
