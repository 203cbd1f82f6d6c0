#!/usr/bin/env python3
"""Install manifests for the lab's platform layer, made from the modules' own sources.

kueue: the CRDs, RBAC and webhook configurations are generated with controller-gen exactly as
Kueue's Makefile `manifests` target does (same generators, options and package paths, the
packages named by import path so that the read-only module cache is only read), into a
writable copy of the module's config/ under WORK. The generated files must equal the ones
the module ships (compared as data, not as text); then `kubectl kustomize` builds
config/default with a lab overlay: the locally made image, `imagePullPolicy: IfNotPresent`
(nothing can be pulled), and the manager on the control plane (the lab's workers carry pool
taints; the image is imported there).

kube-network-policies: the module's install.yaml with the locally made image.

Usage (build.sh runs it):
  manifests.py kueue --module DIR --controller-gen BIN --kubectl BIN --image REF
                     --gomod-dir DIR --work DIR --out FILE
  manifests.py kube-network-policies --module DIR --image REF --out FILE
"""

from __future__ import annotations

import argparse
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

KUEUE = "sigs.k8s.io/kueue"
# Kueue's Makefile `manifests`: one controller-gen run for the CRDs, one for RBAC + webhooks.
CRD_RUN = ("crd:generateEmbeddedObjectMeta=true", "output:crd:artifacts:config={out}/crd/bases", ("apis",))
RBAC_WEBHOOK_RUN = (
    "rbac:roleName=manager-role",
    "output:rbac:artifacts:config={out}/rbac",
    "webhook",
    "output:webhook:artifacts:config={out}/webhook",
    ("pkg/controller", "pkg/webhooks", "pkg/util/cert", "pkg/visibility"),
)
# What controller-gen writes (and so what is compared with the shipped copies).
GENERATED = ("crd/bases/*.yaml", "rbac/role.yaml", "webhook/manifests.yaml")
CONTROL_PLANE_TAINT = "node-role.kubernetes.io/control-plane"


def _docs(path: Path) -> list[Any]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def _writable_copy(src: Path, dest: Path) -> None:
    """The module cache is read-only: copy without its modes, then make everything writable."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest, copy_function=shutil.copyfile)
    for p in [dest, *dest.rglob("*")]:
        p.chmod(p.stat().st_mode | stat.S_IWUSR | (stat.S_IXUSR if p.is_dir() else 0))


def _controller_gen(binary: str, gomod_dir: Path, out: Path, run: tuple[Any, ...]) -> None:
    *generators, packages = run
    paths = ";".join(f"{KUEUE}/{p}/..." for p in packages)
    argv = [binary, *(g.format(out=out) for g in generators), f"paths={paths}"]
    print("+", " ".join(argv), file=sys.stderr)
    subprocess.run(argv, cwd=gomod_dir, check=True)


def _compare(generated: Path, shipped: Path) -> list[str]:
    """Files that differ as data between the generated tree and the shipped one."""
    report: list[str] = []
    for pattern in GENERATED:
        names = {p.relative_to(shipped) for p in shipped.glob(pattern)}
        names |= {p.relative_to(generated) for p in generated.glob(pattern)}
        for name in sorted(names):
            mine, theirs = generated / name, shipped / name
            if not mine.exists() or not theirs.exists():
                report.append(f"{name}: only {'shipped' if theirs.exists() else 'generated'}")
            elif _docs(mine) != _docs(theirs):
                report.append(f"{name}: differs")
    return report


def _overlay(work: Path, image: str) -> Path:
    """A kustomization over config/default: our image, never pulled, on the control plane."""
    manager = yaml.safe_load((work / "config/components/manager/kustomization.yaml").read_text())
    upstream = manager["images"][0]["newName"]
    name, _, tag = image.rpartition(":")
    lab = work / "lab"
    lab.mkdir(exist_ok=True)
    patch = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "kueue-controller-manager", "namespace": "kueue-system"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "manager", "imagePullPolicy": "IfNotPresent"}],
                    "nodeSelector": {CONTROL_PLANE_TAINT: ""},
                    "tolerations": [
                        {"key": CONTROL_PLANE_TAINT, "operator": "Exists", "effect": "NoSchedule"}
                    ],
                }
            }
        },
    }
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": ["../config/default"],
        "images": [{"name": upstream, "newName": name, "newTag": tag}],
        "patches": [
            {
                "patch": yaml.safe_dump(patch),
                "target": {"kind": "Deployment", "name": "kueue-controller-manager"},
            }
        ],
    }
    (lab / "kustomization.yaml").write_text(yaml.safe_dump(kustomization, sort_keys=False))
    return lab


def kueue(a: argparse.Namespace) -> int:
    work, module = Path(a.work), Path(a.module)
    _writable_copy(module / "config", work / "config")
    components = work / "config/components"
    for pattern in GENERATED:
        for old in components.glob(pattern):
            old.unlink()
    _controller_gen(a.controller_gen, Path(a.gomod_dir), components, CRD_RUN)
    _controller_gen(a.controller_gen, Path(a.gomod_dir), components, RBAC_WEBHOOK_RUN)
    differ = _compare(components, module / "config/components")
    crds = sorted(p.name for p in (components / "crd/bases").glob("*.yaml"))
    (work / "generated-vs-shipped.txt").write_text(
        f"controller-gen: {len(crds)} CRDs, rbac/role.yaml, webhook/manifests.yaml\n"
        + ("\n".join(differ) if differ else "equal (as data) to the module's config/components")
        + "\n"
    )
    if differ:
        print("generated manifests differ from the module's:\n  " + "\n  ".join(differ), file=sys.stderr)
        return 1
    lab = _overlay(work, a.image)
    built = subprocess.run(
        [a.kubectl, "kustomize", str(lab)], check=True, capture_output=True, text=True
    ).stdout
    images = {
        c["image"]
        for d in yaml.safe_load_all(built)
        if d and d.get("kind") == "Deployment"
        for c in d["spec"]["template"]["spec"]["containers"]
    }
    if images != {a.image}:
        print(f"the manifest's images are {sorted(images)}, not {a.image}", file=sys.stderr)
        return 1
    _write(
        Path(a.out),
        f"# Kueue {a.version}: CRDs generated by controller-gen, config/default, image {a.image}\n" + built,
    )
    return 0


def network_policies(a: argparse.Namespace) -> int:
    docs = _docs(Path(a.module) / "install.yaml")
    daemonsets = [d for d in docs if d["kind"] == "DaemonSet"]
    if len(daemonsets) != 1:
        print(f"install.yaml has {len(daemonsets)} DaemonSets, expected 1", file=sys.stderr)
        return 1
    for container in daemonsets[0]["spec"]["template"]["spec"]["containers"]:
        container["image"] = a.image
        container["imagePullPolicy"] = "IfNotPresent"
    header = f"# kube-network-policies {a.version}: the module's install.yaml, image {a.image}\n"
    _write(Path(a.out), header + yaml.safe_dump_all(docs, sort_keys=False))
    return 0


def _write(out: Path, text: str) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(out)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    k = sub.add_parser("kueue")
    n = sub.add_parser("kube-network-policies")
    for s in (k, n):
        s.add_argument("--module", required=True, help="the module's directory in GOMODCACHE")
        s.add_argument("--image", required=True)
        s.add_argument("--version", required=True)
        s.add_argument("--out", required=True)
    k.add_argument("--controller-gen", required=True)
    k.add_argument("--kubectl", required=True)
    k.add_argument("--gomod-dir", required=True, help="the wrapper module that requires sigs.k8s.io/kueue")
    k.add_argument("--work", required=True)
    a = p.parse_args(argv)
    return kueue(a) if a.what == "kueue" else network_policies(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
