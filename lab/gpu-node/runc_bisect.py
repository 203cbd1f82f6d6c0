"""Name the part of a pod sandbox's OCI config that runc cannot start on this machine.

runtime-stage.sh keeps the config.json containerd asked runc to create. This starts it again
with runc alone, first as it was, then once per variant with one part taken out, and prints
one line per variant: whether the container started and runc's last error. Stdlib only: it
runs on the GPU machine's own Python.

    python3 runc_bisect.py CONFIG.json PAUSE_IMAGE.tar OUT_DIR
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

RUNC = "/usr/local/lib/gpurack/runc"
Config = dict[str, Any]


def _linux(config: Config) -> Config:
    linux: Config = config.setdefault("linux", {})
    return linux


def _drop_namespace(kind: str) -> Callable[[Config], None]:
    def edit(config: Config) -> None:
        linux = _linux(config)
        linux["namespaces"] = [n for n in linux.get("namespaces", []) if n.get("type") != kind]

    return edit


def _drop(*path: str) -> Callable[[Config], None]:
    def edit(config: Config) -> None:
        node = config
        for key in path[:-1]:
            node = node.get(key) or {}
        node.pop(path[-1], None)

    return edit


def _only_default_mounts(config: Config) -> None:
    config["mounts"] = [
        m for m in config.get("mounts", []) if not str(m.get("source", "")).startswith("/run/")
    ]


def _everything(config: Config) -> None:
    for edit in (_drop("linux", "cgroupsPath"), _drop("linux", "resources"), _drop("process", "oomScoreAdj")):
        edit(config)
    _linux(config)["namespaces"] = [{"type": "mount"}]


VARIANTS: dict[str, Callable[[Config], None]] = {
    "as containerd asked": lambda config: None,
    "no cgroup namespace": _drop_namespace("cgroup"),
    "no pid namespace": _drop_namespace("pid"),
    "no ipc namespace": _drop_namespace("ipc"),
    "no uts namespace": _drop_namespace("uts"),
    "no network namespace": _drop_namespace("network"),
    "no cgroupsPath": _drop("linux", "cgroupsPath"),
    "no resources": _drop("linux", "resources"),
    "no oomScoreAdj": _drop("process", "oomScoreAdj"),
    "no seccomp": _drop("linux", "seccomp"),
    "no masked/readonly paths": lambda c: [_drop("linux", k)(c) for k in ("maskedPaths", "readonlyPaths")],
    "no sysctl": _drop("linux", "sysctl"),
    "no rlimits": _drop("process", "rlimits"),
    "no mounts from /run": _only_default_mounts,
    "mount namespace, nothing else": _everything,
}


def _rootfs(image: Path, into: Path) -> None:
    """Unpack a `docker save` archive's layers, in order, into `into`."""
    with tarfile.open(image) as archive:
        member = archive.extractfile("manifest.json")
        if member is None:
            raise SystemExit(f"{image}: no manifest.json")
        layers = json.load(member)[0]["Layers"]
        for layer in layers:
            blob = archive.extractfile(layer)
            if blob is None:
                continue
            with tarfile.open(fileobj=blob) as inner:
                inner.extractall(into, filter="tar")


def _try(name: str, config: Config, rootfs: Path, out: Path, index: int) -> str:
    bundle = Path(tempfile.mkdtemp(prefix="bisect-"))
    edited = copy.deepcopy(config)
    VARIANTS[name](edited)
    edited["root"] = {"path": str(rootfs), "readonly": False}
    edited.get("process", {})["args"] = ["/pause"]
    edited.pop("hooks", None)
    (bundle / "config.json").write_text(json.dumps(edited))
    log = out / f"bisect-{index:02d}.log"
    container = f"bisect-{index}"
    try:
        run = subprocess.run(
            [RUNC, "--debug", "--log", str(log), "run", "-d", "--bundle", str(bundle), container],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
        code, said = run.returncode, (run.stderr.strip().splitlines() or [""])[-1]
    except subprocess.TimeoutExpired:
        code, said = 124, "timed out"
    subprocess.run([RUNC, "delete", "-f", container], capture_output=True, check=False)
    fatal = (
        [line for line in log.read_text().splitlines() if '"fatal"' in line or "FATA" in line]
        if log.exists()
        else []
    )
    why = json.loads(fatal[-1]).get("msg", fatal[-1]) if fatal and fatal[-1].startswith("{") else said
    return f"{'started' if code == 0 else f'rc {code}':<9} {name:<32} {why[:200] if code else ''}"


def main(argv: list[str]) -> int:
    config_path, image, out = Path(argv[0]), Path(argv[1]), Path(argv[2])
    config: Config = json.loads(config_path.read_text())
    rootfs = Path(tempfile.mkdtemp(prefix="rootfs-"))
    _rootfs(image, rootfs)
    print("== runc alone on the kept sandbox config, one part taken out at a time")
    lines = [_try(name, config, rootfs, out, i) for i, name in enumerate(VARIANTS)]
    print("\n".join(lines))
    (out / "bisect.txt").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
