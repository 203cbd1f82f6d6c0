"""The platform objects of an Ansible inventory, without a cluster (`gpurack platform render`).

The inventory is read as ansible-playbook reads it (group_vars and host_vars applied); with
no facts gathered, each pool's GPUs are its hosts' `gpurack_expect.gpu.count`. The objects
come from the collection's one code path (module_utils/platform), the same the
platform_objects module gives the roles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import (
    SECTIONS,
    PlatformInputError,
    PoolCapacity,
    Site,
    build_objects,
    pool_capacity,
    site_from_hostvars,
)

from gpurack import ansible_inventory, outfile
from gpurack.errors import UsageError

DEFAULT_HOSTS = "gpu_nodes"
# What the site reads per host, and site-wide (from the implicit localhost, as platform.yml).
HOST_VARS = (
    "gpurack_pool",
    "gpurack_expect",
    "gpurack_gpu",
    # Where the node sits: the Kueue Topology levels its pool may name (platform/topology.py).
    "gpurack_cabling",
    "gpurack_rack",
    "gpurack_block",
)
SITE_VARS = (
    "gpurack_fabric_spines",
    "gpurack_kueue_topology",
    "gpurack_teams",
    "gpurack_cohort",
    "gpurack_quota_overcommit",
    "gpurack_priority_classes",
    "gpurack_object_store",
    "gpurack_prometheus_url",
    "gpurack_metrics_adapter_image",
    "gpurack_dra_driver",
    # The roles' own variables, where the inventory sets them (defaults as the roles').
    "observability_namespace",
    "gpu_operator_namespace",
)
# What gpurack_prometheus_url's default is made of (playbooks/tasks/read_platform_site.yml).
PROMETHEUS_VARS = ("observability_prometheus_host", "observability_prometheus_port")
PROMETHEUS_PORT = 9090
CONTROL_PLANE_GROUP = "kube_control_plane"
SWITCH_GROUP = "tor_switches"


class _Dumper(yaml.SafeDumper):
    """Block YAML without anchors: a reviewer reads each object whole."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _text(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    """A string of several lines (a config file in a ConfigMap) as a literal block, as it reads;
    PyYAML quotes it instead where a block cannot hold it (trailing spaces)."""
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)


_Dumper.add_representer(str, _text)


HEADER = "# gpurack platform render: the {section} objects, in the order to apply them\n"


@dataclass(frozen=True, slots=True)
class Rendered:
    """What `render` wrote: each file with its object count, and each pool's capacity."""

    files: tuple[tuple[Path, int], ...]
    capacity: tuple[PoolCapacity, ...]


def load_site(inventory: Path, hosts: str = DEFAULT_HOSTS) -> Site:
    """The site of `inventory`'s hosts matching the pattern `hosts`.

    Raises:
        UsageError: no host matches, a variable cannot be templated, or the site is invalid.
    """
    read = ansible_inventory.Inventory(inventory)
    names = read.hosts(hosts)
    if not names:
        raise UsageError(f"no hosts of {inventory} match {hosts!r}")
    hostvars = {name: read.host_vars(name, HOST_VARS) for name in names}
    site_vars = read.localhost_vars(SITE_VARS)
    site_vars.setdefault("gpurack_prometheus_url", default_prometheus_url(read))
    site_vars["gpurack_fabric_switches"] = bool(read.hosts(SWITCH_GROUP))  # as read_platform_site.yml
    try:
        return site_from_hostvars(hostvars, names, site_vars)
    except PlatformInputError as exc:
        raise UsageError(f"{inventory}: {exc}") from None


def default_prometheus_url(read: ansible_inventory.Inventory) -> str:
    """Where the observability role's Prometheus answers, as platform.yml derives it: its host
    (observability_prometheus_host, else the first control plane) at its ansible_host, on
    observability_prometheus_port; "" without such a host."""
    found = read.localhost_vars(PROMETHEUS_VARS)
    host = found.get("observability_prometheus_host") or next(iter(read.hosts(CONTROL_PLANE_GROUP)), "")
    if not host:
        return ""
    address = str(read.host_vars(str(host), ("ansible_host",)).get("ansible_host") or host)
    if ":" in address:
        address = f"[{address}]"
    return f"http://{address}:{found.get('observability_prometheus_port', PROMETHEUS_PORT)}/"


def render(
    site: Site, output: Path, *, force: bool = False, sections: Sequence[str] = tuple(SECTIONS)
) -> Rendered:
    """Write one YAML file per section (`tenancy.yaml`, `kueue.yaml`, ...) into `output`.

    Raises:
        UsageError: a GPU quota above a pool's capacity (unless the site allows overcommit),
            or `output` is a file, or a non-empty folder without `force`.
    """
    try:
        built = {section: build_objects(site, (section,)) for section in sections}
    except PlatformInputError as exc:
        raise UsageError(str(exc)) from None
    _prepare(output, force)
    files = []
    for section, objects in built.items():
        path = output / f"{section}.yaml"
        text = HEADER.format(section=section) + yaml.dump_all(
            objects, Dumper=_Dumper, sort_keys=False, explicit_start=True, default_flow_style=False
        )
        outfile.write_text(path, text, replace=force)
        files.append((path, len(objects)))
    return Rendered(files=tuple(files), capacity=tuple(pool_capacity(site)))


def _prepare(output: Path, force: bool) -> None:
    if output.exists() and not output.is_dir():
        raise UsageError(f"--output {output} exists and is not a folder")
    if output.is_dir() and any(output.iterdir()) and not force:
        raise UsageError(f"--output {output} is not empty (use --force to write into it)")
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create --output {output}: {exc.strerror or exc}") from None
