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

kube-network-policies: the module's install.yaml with the locally made image (built only on
request: it cannot enforce on the lab machines' kernels, see docs/lab-kubernetes.md).

kube-router-firewall: the lab's NetworkPolicy agent, kube-router's network policy controller
alone beside the lab's bridge CNI, as the module's daemonset/kube-router-firewall-daemonset.yaml
runs it but without its CNI install (`--enable-cni=false`): a DaemonSet in the host network of
every node (every taint tolerated), with the service account and the ClusterRole of the
module's daemonsets (pods, namespaces, nodes, services, endpoints, endpointslices,
networkpolicies).

Usage (build.sh runs it):
  manifests.py kueue --module DIR --controller-gen BIN --kubectl BIN --image REF
                     --gomod-dir DIR --work DIR --out FILE
  manifests.py kube-network-policies --module DIR --image REF --out FILE
  manifests.py kube-router-firewall --module DIR --image REF --out FILE
"""

from __future__ import annotations

import argparse
import json
import re
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


# The one field a newer controller-gen changes by itself: the version that wrote the file.
VERSION_ANNOTATION = "controller-gen.kubebuilder.io/version"


def _docs(path: Path) -> list[Any]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def _versions(docs: list[Any]) -> set[str]:
    return {str(d.get("metadata", {}).get("annotations", {}).get(VERSION_ANNOTATION)) for d in docs}


# controller-tools v0.23 writes the rule of `+kubebuilder:validation:ExactlyOneOf` as a sum
# where v0.20 (which wrote the module's copies) filtered a list; the same CEL predicate.
_EXACTLY_ONE_V020 = re.compile(r"^\[((?:has\(self\.\w+\),?)+)\]\.filter\(x,x==true\)\.size\(\) == 1$")


def _rule_as_v023(rule: str) -> str:
    match = _EXACTLY_ONE_V020.match(rule)
    if not match:
        return rule
    return "+".join(f"({h}?1:0)" for h in re.findall(r"has\(self\.\w+\)", match.group(1))) + " == 1"


def _normalised(node: Any) -> Any:
    """The document without the generator's version annotation, its CEL rules spelled as v0.23."""
    if isinstance(node, dict):
        out = {k: _normalised(v) for k, v in node.items()}
        if isinstance(out.get("annotations"), dict):
            out["annotations"].pop(VERSION_ANNOTATION, None)
        if isinstance(out.get("rule"), str):
            out["rule"] = _rule_as_v023(out["rule"])
        return out
    if isinstance(node, list):
        return [_normalised(v) for v in node]
    return node


def _respelled(docs: list[Any]) -> int:
    """How many CEL rules the normalisation respelled (reported, so nothing hides in it)."""
    text = json.dumps(docs)
    return len(re.findall(r"\.filter\(x,x==true\)\.size\(\) == 1", text))


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
    """Files that differ as data between the generated tree and the shipped one, apart from
    the annotation naming controller-gen's version (see `_generator_versions`)."""
    report: list[str] = []
    for pattern in GENERATED:
        names = {p.relative_to(shipped) for p in shipped.glob(pattern)}
        names |= {p.relative_to(generated) for p in generated.glob(pattern)}
        for name in sorted(names):
            mine, theirs = generated / name, shipped / name
            if not mine.exists() or not theirs.exists():
                report.append(f"{name}: only {'shipped' if theirs.exists() else 'generated'}")
            elif _normalised(_docs(mine)) != _normalised(_docs(theirs)):
                report.append(f"{name}: differs")
    return report


def _generator_versions(tree: Path) -> str:
    return ", ".join(sorted(set().union(*(_versions(_docs(p)) for p in tree.glob("crd/bases/*.yaml")))))


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
    shipped_by, made_by = _generator_versions(module / "config/components"), _generator_versions(components)
    respelled = sum(_respelled(_docs(p)) for p in (module / "config/components/crd/bases").glob("*.yaml"))
    (work / "generated-vs-shipped.txt").write_text(
        f"controller-gen {made_by}: {len(crds)} CRDs, rbac/role.yaml, webhook/manifests.yaml\n"
        f"the module's were written by controller-gen {shipped_by} ({VERSION_ANNOTATION}); "
        f"{respelled} ExactlyOneOf CEL rules of theirs compared as v0.23 spells them\n"
        + (
            "\n".join(differ)
            if differ
            else "equal as data to the module's config/components, but for those two spellings"
        )
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


KUBE_ROUTER = "kube-router"
# Network policy only, beside another CNI (the module's docs/user-guide.md): no routing, no
# service proxy (kube-proxy is the lab's), no CNI config of its own, no BGP, no pod SNAT.
KUBE_ROUTER_ARGS = (
    "--run-firewall=true",
    "--run-router=false",
    "--run-service-proxy=false",
    "--run-loadbalancer=false",
    "--enable-cni=false",
    "--enable-ibgp=false",
    "--enable-overlay=false",
    "--enable-pod-egress=false",
)
KUBE_ROUTER_HEALTH_PORT = 20244
_READ = ["get", "list", "watch"]
KUBE_ROUTER_RULES = [
    {
        "apiGroups": [""],
        "resources": ["namespaces", "pods", "services", "nodes", "endpoints"],
        "verbs": _READ,
    },
    {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": [*_READ]},
    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": [*_READ]},
]


def _kube_router_container(image: str) -> dict[str, Any]:
    return {
        "name": KUBE_ROUTER,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "args": list(KUBE_ROUTER_ARGS),
        "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "securityContext": {"privileged": True},
        "livenessProbe": {
            "httpGet": {"path": "/healthz", "port": KUBE_ROUTER_HEALTH_PORT},
            "initialDelaySeconds": 10,
            "periodSeconds": 3,
        },
        "readinessProbe": {
            "httpGet": {"path": "/healthz", "port": KUBE_ROUTER_HEALTH_PORT},
            "periodSeconds": 3,
        },
        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
        "volumeMounts": [
            {"name": "xtables-lock", "mountPath": "/run/xtables.lock"},
        ],
    }


def _kube_router_daemonset(image: str) -> dict[str, Any]:
    labels = {"k8s-app": KUBE_ROUTER}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": KUBE_ROUTER, "namespace": "kube-system", "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "serviceAccountName": KUBE_ROUTER,
                    "priorityClassName": "system-node-critical",
                    "hostNetwork": True,
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [_kube_router_container(image)],
                    "volumes": [
                        {
                            "name": "xtables-lock",
                            "hostPath": {"path": "/run/xtables.lock", "type": "FileOrCreate"},
                        },
                    ],
                },
            },
        },
    }


def kube_router_objects(image: str) -> list[dict[str, Any]]:
    """The firewall's ServiceAccount, ClusterRole, ClusterRoleBinding and DaemonSet."""
    meta = {"name": KUBE_ROUTER}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {**meta, "namespace": "kube-system"}},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": meta,
            "rules": KUBE_ROUTER_RULES,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": KUBE_ROUTER},
            "subjects": [{"kind": "ServiceAccount", "name": KUBE_ROUTER, "namespace": "kube-system"}],
        },
        _kube_router_daemonset(image),
    ]


def kube_router_firewall(a: argparse.Namespace) -> int:
    shipped = Path(a.module) / "daemonset/kube-router-firewall-daemonset.yaml"
    args = {
        arg
        for d in _docs(shipped)
        if d["kind"] == "DaemonSet"
        for c in d["spec"]["template"]["spec"]["containers"]
        for arg in c.get("args", [])
    }
    missing = {"--run-router=false", "--run-firewall=true", "--run-service-proxy=false"} - args
    if missing:
        print(f"{shipped.name} no longer runs the firewall alone (lacks {sorted(missing)})", file=sys.stderr)
        return 1
    header = f"# kube-router {a.version}: its network policy controller alone, image {a.image}\n"
    _write(Path(a.out), header + yaml.safe_dump_all(kube_router_objects(a.image), sort_keys=False))
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
    r = sub.add_parser("kube-router-firewall")
    for s in (k, n, r):
        s.add_argument("--module", required=True, help="the module's directory in GOMODCACHE")
        s.add_argument("--image", required=True)
        s.add_argument("--version", required=True)
        s.add_argument("--out", required=True)
    k.add_argument("--controller-gen", required=True)
    k.add_argument("--kubectl", required=True)
    k.add_argument("--gomod-dir", required=True, help="the wrapper module that requires sigs.k8s.io/kueue")
    k.add_argument("--work", required=True)
    a = p.parse_args(argv)
    return {
        "kueue": kueue,
        "kube-network-policies": network_policies,
        "kube-router-firewall": kube_router_firewall,
    }[a.what](a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
