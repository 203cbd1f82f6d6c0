"""Names in `gpurack platform render`: each checked by the rule of every place it lands, no team
inside a namespace the platform uses, and no two rendered objects with one kind, namespace and name.

The API server must never be the first to refuse a name gpurack called valid: every name and
label in what render writes passes Kubernetes' rules (module_utils/names.py).
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.names import (
    is_dns_label,
    is_dns_subdomain,
    is_label_key,
    is_label_value,
)
from cli_helpers import invoke
from gpurack import platform
from gpurack.errors import ExitCode

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "inventory" / "example"
# Objects whose names are DNS labels (Namespace) rather than subdomains.
_LABEL_NAMED = {"Namespace", "Service"}


def _inventory(tmp_path: Path, **site: Any) -> Path:
    """The example inventory with `site` merged into group_vars/all/teams.yml."""
    copy = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, copy)
    teams = copy / "group_vars" / "all" / "teams.yml"
    values = yaml.safe_load(teams.read_text()) | site
    teams.write_text(yaml.safe_dump(values))
    return copy


def _team(name: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "groups": ["g"], "quota": {"h100-train-a": {"gpus": 0}}, **more}


def _example_teams() -> list[dict[str, Any]]:
    return list(yaml.safe_load((EXAMPLE / "group_vars/all/teams.yml").read_text())["gpurack_teams"])


def _refused(capsys: pytest.CaptureFixture[str], tmp_path: Path, **site: Any) -> str:
    result = invoke(capsys, "platform", "render", "-i", _inventory(tmp_path, **site), "-o", tmp_path / "out")
    assert result.code == ExitCode.USAGE, result
    assert result.err.count("\n") == 1, result.err
    assert not (tmp_path / "out").exists()
    return result.err


@pytest.mark.parametrize(
    ("namespace", "site"),
    [
        ("kueue-system", {}),
        ("gpu-operator", {}),
        ("gpurack-observability", {}),
        ("metrics", {"observability_namespace": "metrics"}),
        ("accel", {"gpu_operator_namespace": "accel"}),
        ("store", {"gpurack_object_store": {"namespace": "store", "port": 7070}}),
        ("kube-system", {}),
        ("default", {}),
    ],
)
def test_a_team_cannot_take_a_namespace_the_platform_uses(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, namespace: str, site: dict[str, Any]
) -> None:
    teams = [*_example_teams(), _team(namespace)]
    err = _refused(capsys, tmp_path, gpurack_teams=teams, **site)
    assert f"team {namespace}: name {namespace!r} is a namespace" in err


def _with_team_field(**field: Any) -> dict[str, Any]:
    return {"gpurack_teams": [*_example_teams(), _team("extra", **field)]}


@pytest.mark.parametrize(
    ("site", "message"),
    [
        # `name: |` in YAML keeps a newline that `$` in a regex lets through.
        ({"gpurack_teams": [*_example_teams(), _team("extra\n")]}, "'extra\\n' must be a DNS label"),
        ({"gpurack_cohort": "site\n"}, "gpurack_cohort: 'site\\n' must be a DNS subdomain"),
        ({"gpurack_cohort": "a" * 254}, "must be a DNS subdomain"),
        # A team's name is its Namespace: a DNS label, not a subdomain.
        ({"gpurack_teams": [*_example_teams(), _team("a.b")]}, "'a.b' must be a DNS label"),
        ({"gpurack_teams": [*_example_teams(), _team("t" * 64)]}, "must be a DNS label"),
        # The observability and GPU Operator namespaces are Namespaces too.
        ({"observability_namespace": "obs.site"}, "observability_namespace: 'obs.site' must be a DNS label"),
        ({"gpu_operator_namespace": "gpu\n"}, "gpu_operator_namespace: 'gpu\\n' must be a DNS label"),
        (
            {"gpurack_object_store": {"namespace": "s3\n", "port": 1}},
            "namespace: 's3\\n' must be a DNS label",
        ),
        # A priority class name is also the value of the jobs' priority-class label (63 at most).
        (
            {"gpurack_priority_classes": [{"name": "p" * 64, "value": 1}]},
            "must be a label value",
        ),
        ({"gpurack_priority_classes": [{"name": "training\n", "value": 1}]}, "must be a DNS subdomain"),
        # The object store's pod labels land in the teams' NetworkPolicy podSelector.
        (
            {"gpurack_object_store": {"namespace": "s3", "port": 1, "pod_labels": {"app\n": "s3"}}},
            "gpurack_object_store.pod_labels: label key 'app\\n'",
        ),
        (
            {"gpurack_object_store": {"namespace": "s3", "port": 1, "pod_labels": {"app": "s3\n"}}},
            "gpurack_object_store.pod_labels['app']: 's3\\n' must be a label value",
        ),
        (
            {"gpurack_object_store": {"namespace": "s3", "port": 1, "pod_labels": {"app": "v" * 64}}},
            "must be a label value",
        ),
        (
            {"gpurack_object_store": {"namespace": "s3", "port": 1, "pod_labels": {"Bad_/app": "s3"}}},
            "prefix 'Bad_' must be a DNS subdomain",
        ),
    ],
)
def test_every_name_is_checked_by_the_rule_of_where_it_lands(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, site: dict[str, Any], message: str
) -> None:
    assert message in _refused(capsys, tmp_path, **site)


def test_a_pool_name_with_a_trailing_newline_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    inventory = _inventory(tmp_path)
    pool = next((inventory / "group_vars").glob("h200*/pool.yml"))
    values = yaml.safe_load(pool.read_text())
    values["gpurack_pool"]["name"] = values["gpurack_pool"]["name"] + "\n"
    pool.write_text(yaml.safe_dump(values))
    result = invoke(capsys, "platform", "render", "-i", inventory, "-o", tmp_path / "out")
    assert result.code == ExitCode.USAGE, result
    assert "must be a DNS label" in result.err and result.err.count("\n") == 1


def _rendered(capsys: pytest.CaptureFixture[str], inventory: Path, out: Path) -> list[dict[str, Any]]:
    result = invoke(capsys, "platform", "render", "-i", inventory, "-o", out)
    assert result.code == ExitCode.OK, result.err
    return [d for path in sorted(out.glob("*.yaml")) for d in yaml.safe_load_all(path.read_text()) if d]


# Where a rendered object holds a name or a label below its metadata: labels and selectors
# (label key to label value), namespaces (DNS labels), references to other objects (subdomains).
_LABEL_MAPS = {"labels", "matchLabels", "nodeLabels", "nodeSelector"}
_REFERENCES = {"cohortName", "cohort", "clusterQueue", "priorityClassName"}


def _names_kubernetes_refuses(node: Any, parent: str = "") -> list[tuple[str, Any]]:
    """Every (field, value) in `node`, at any depth, that Kubernetes' rule for that field refuses."""
    bad: list[tuple[str, Any]] = []
    if isinstance(node, list):
        for item in node:
            bad.extend(_names_kubernetes_refuses(item, parent))
        if parent == "flavors":
            bad.extend(("flavors.name", f["name"]) for f in node if not is_dns_subdomain(f["name"]))
        return bad
    if not isinstance(node, dict):
        return bad
    if parent in _LABEL_MAPS:
        bad.extend((parent, (k, v)) for k, v in node.items() if not (is_label_key(k) and is_label_value(v)))
        return bad
    if parent == "annotations":
        bad.extend((parent, k) for k in node if not is_label_key(k))
    taint_ok = is_label_key(node.get("key")) and is_label_value(node.get("value", ""))
    if parent == "tolerations" and not taint_ok:
        bad.append((parent, node))
    for key, value in node.items():
        rule = is_dns_label if key == "namespace" else is_dns_subdomain if key in _REFERENCES else None
        if rule is None:
            bad.extend(_names_kubernetes_refuses(value, key))
        elif not rule(value):
            bad.append((key, value))
    return bad


_EDGE_TEAMS = [
    _team("t" * 63),
    _team("a-1", pod_security="baseline"),
    _team("research-2", priority="batch"),
]


@pytest.mark.parametrize(
    "site",
    [
        {},
        {"gpurack_teams": [*_example_teams(), *_EDGE_TEAMS]},
        {
            "observability_namespace": "o" * 63,
            "gpu_operator_namespace": "nvidia-gpu-operator",
            "gpurack_object_store": {
                "namespace": "s3",
                "port": 7070,
                "pod_labels": {"app.kubernetes.io/name": "v" * 63, "tier": ""},
            },
            "gpurack_cohort": "a." * 100 + "b",
            "gpurack_priority_classes": [
                {"name": "training", "value": 9},
                {"name": "inference", "value": 8},
                {"name": "p" * 63, "value": 5},
                {"name": "low.batch", "value": 1},
            ],
        },
    ],
    ids=["example", "edge-teams", "edge-site"],
)
def test_no_two_rendered_objects_share_kind_namespace_and_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, site: dict[str, Any]
) -> None:
    inventory = _inventory(tmp_path, **site)
    objects = _rendered(capsys, inventory, tmp_path / "out")
    # Two sections may write the very same object (the observability Namespace: the inference
    # section's prometheus-adapter runs there, applied before the observability role runs), never
    # two different objects under one name.
    distinct = [o for index, o in enumerate(objects) if o not in objects[:index]]
    keys = Counter((o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in distinct)
    assert [key for key, count in keys.items() if count > 1] == []
    for o in objects:
        meta = o["metadata"]
        name_ok = is_dns_label if o["kind"] in _LABEL_NAMED else is_dns_subdomain
        assert name_ok(meta["name"]), (o["kind"], meta["name"])
        assert _names_kubernetes_refuses(o) == [], o
    # Every namespace the platform renders into is one no team can take.
    site_model = platform.load_site(inventory)
    teams = {t.name for t in site_model.teams}
    used = {o["metadata"].get("namespace") for o in objects} | {
        o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"
    }
    assert used - teams - {None} <= site_model.platform_namespaces
