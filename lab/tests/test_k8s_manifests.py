"""lab/k8s-build/manifests.py: what the platform layer's install manifests are made of."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import yaml

SCRIPT = Path(__file__).resolve().parents[1] / "k8s-build" / "manifests.py"


def _manifests() -> ModuleType:
    spec = importlib.util.spec_from_file_location("k8s_build_manifests", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_compare_ignores_formatting_and_names_what_differs(tmp_path: Path) -> None:
    m = _manifests()
    shipped = _tree(
        tmp_path / "shipped",
        {
            "crd/bases/a.yaml": "kind: CustomResourceDefinition\nspec: {names: {kind: A}}\n",
            "crd/bases/b.yaml": "kind: CustomResourceDefinition\nspec: {names: {kind: B}}\n",
            "rbac/role.yaml": "kind: ClusterRole\nrules: []\n",
            "webhook/manifests.yaml": "---\nkind: MutatingWebhookConfiguration\n",
        },
    )
    generated = _tree(
        tmp_path / "generated",
        {
            "crd/bases/a.yaml": "---\n# made\nkind: CustomResourceDefinition\nspec:\n  names: {kind: A}\n",
            "crd/bases/b.yaml": "kind: CustomResourceDefinition\nspec: {names: {kind: Bee}}\n",
            "crd/bases/c.yaml": "kind: CustomResourceDefinition\n",
            "rbac/role.yaml": "rules: []\nkind: ClusterRole\n",
            "webhook/manifests.yaml": "kind: MutatingWebhookConfiguration\n",
        },
    )
    assert m._compare(generated, shipped) == ["crd/bases/b.yaml: differs", "crd/bases/c.yaml: only generated"]
    assert m._compare(shipped, shipped) == []


def test_network_policies_manifest_gets_the_local_image_never_pulled(tmp_path: Path) -> None:
    m = _manifests()
    module = _tree(
        tmp_path / "mod",
        {
            "install.yaml": (
                "kind: ServiceAccount\nmetadata: {name: x}\n---\nkind: DaemonSet\nmetadata: {name: x}\n"
                "spec: {template: {spec: {containers: [{name: c, image: upstream/netpol:v0.7.0}]}}}\n"
            )
        },
    )
    out = tmp_path / "out" / "kube-network-policies.yaml"
    args = argparse.Namespace(
        module=str(module),
        image="registry.gpurack.lab/kube-network-policies:v0.8.0",
        version="v0.8.0",
        out=str(out),
    )
    assert m.network_policies(args) == 0
    docs = list(yaml.safe_load_all(out.read_text()))
    assert [d["kind"] for d in docs] == ["ServiceAccount", "DaemonSet"]
    (container,) = docs[1]["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.gpurack.lab/kube-network-policies:v0.8.0"
    assert container["imagePullPolicy"] == "IfNotPresent"


def test_kueue_overlay_sets_the_image_and_runs_the_manager_on_the_control_plane(tmp_path: Path) -> None:
    m = _manifests()
    _tree(
        tmp_path,
        {
            "config/components/manager/kustomization.yaml": (
                "images:\n- name: controller\n  newName: upstream.example/kueue/kueue\n  newTag: main\n"
            )
        },
    )
    lab = m._overlay(tmp_path, "registry.gpurack.lab/kueue:v0.17.0")
    kustomization = yaml.safe_load((lab / "kustomization.yaml").read_text())
    assert kustomization["resources"] == ["../config/default"]
    assert kustomization["images"] == [
        {"name": "upstream.example/kueue/kueue", "newName": "registry.gpurack.lab/kueue", "newTag": "v0.17.0"}
    ]
    (patch,) = kustomization["patches"]
    spec = yaml.safe_load(patch["patch"])["spec"]["template"]["spec"]
    assert spec["containers"] == [{"name": "manager", "imagePullPolicy": "IfNotPresent"}]
    assert spec["nodeSelector"] == {"node-role.kubernetes.io/control-plane": ""}


def test_exactly_one_of_rules_of_controller_gen_v020_compare_as_v023_spells_them() -> None:
    m = _manifests()
    v020 = "[has(self.universal),has(self.individual)].filter(x,x==true).size() == 1"
    assert m._rule_as_v023(v020) == "(has(self.universal)?1:0)+(has(self.individual)?1:0) == 1"
    assert m._rule_as_v023("self.size() == 1") == "self.size() == 1"
    doc = {"metadata": {"annotations": {m.VERSION_ANNOTATION: "v0.20.1"}}, "x": [{"rule": v020}]}
    assert m._normalised(doc) == {"metadata": {"annotations": {}}, "x": [{"rule": m._rule_as_v023(v020)}]}


FIREWALL_ONLY = (
    "kind: DaemonSet\nspec: {template: {spec: {containers: [{name: kube-router, args: "
    "['--run-router=false', '--run-firewall=true', '--run-service-proxy=false']}]}}}\n"
)


def _firewall_args(tmp_path: Path, shipped: str) -> argparse.Namespace:
    module = _tree(tmp_path / "mod", {"daemonset/kube-router-firewall-daemonset.yaml": shipped})
    return argparse.Namespace(
        module=str(module),
        image="registry.gpurack.lab/kube-router:v2.1.0",
        version="v2.1.0",
        out=str(tmp_path / "out" / "kube-router-firewall.yaml"),
    )


def test_kube_router_runs_only_its_firewall_on_every_node_with_the_local_image(tmp_path: Path) -> None:
    m = _manifests()
    args = _firewall_args(tmp_path, FIREWALL_ONLY)
    assert m.kube_router_firewall(args) == 0
    docs = list(yaml.safe_load_all(Path(args.out).read_text()))
    assert [d["kind"] for d in docs] == ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DaemonSet"]
    spec = docs[3]["spec"]["template"]["spec"]
    assert spec["hostNetwork"] is True and spec["tolerations"] == [{"operator": "Exists"}]
    assert spec["serviceAccountName"] == "kube-router" and docs[3]["metadata"]["namespace"] == "kube-system"
    (container,) = spec["containers"]
    assert container["image"] == "registry.gpurack.lab/kube-router:v2.1.0"
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["securityContext"] == {"privileged": True}
    assert {
        "--run-firewall=true",
        "--run-router=false",
        "--run-service-proxy=false",
        "--enable-cni=false",
    } <= set(container["args"])
    granted = {(g, r) for rule in docs[1]["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    assert {("", "pods"), ("", "namespaces"), ("networking.k8s.io", "networkpolicies")} <= granted
    assert ("discovery.k8s.io", "endpointslices") in granted
    assert all(set(rule["verbs"]) == {"get", "list", "watch"} for rule in docs[1]["rules"])


def test_kube_router_manifest_refuses_a_module_whose_firewall_daemonset_changed(tmp_path: Path) -> None:
    m = _manifests()
    args = _firewall_args(tmp_path, FIREWALL_ONLY.replace("--run-router=false", "--run-router=true"))
    assert m.kube_router_firewall(args) == 1
    assert not Path(args.out).exists()
