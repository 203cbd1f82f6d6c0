"""The platform objects of an Ansible inventory, without a cluster (`gpurack platform render`).

The inventory is read as ansible-playbook reads it (group_vars and host_vars applied); with
no facts gathered, each pool's GPUs are its hosts' `gpurack_expect.gpu.count`. The objects
come from the collection's one code path (module_utils/platform), the same the
platform_objects module gives the roles.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.capacity import (
    PoolCapacity,
    pool_capacity,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.objects import (
    SECTIONS,
    build_objects,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.site import (
    PlatformInputError,
    Site,
    site_from_hostvars,
)

from gpurack import outfile
from gpurack.errors import UsageError

DEFAULT_HOSTS = "gpu_nodes"
# What the site reads per host, and site-wide (from the implicit localhost, as platform.yml).
HOST_VARS = ("gpurack_pool", "gpurack_expect", "gpurack_gpu")
SITE_VARS = (
    "gpurack_teams",
    "gpurack_cohort",
    "gpurack_quota_overcommit",
    "gpurack_priority_classes",
    "gpurack_object_store",
)


class _Dumper(yaml.SafeDumper):
    """Block YAML without anchors: a reviewer reads each object whole."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


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
    # Imported on use: ansible-core takes a while to load and only this verb needs it.
    from ansible.errors import AnsibleError  # noqa: PLC0415
    from ansible.inventory.manager import InventoryManager  # noqa: PLC0415
    from ansible.parsing.dataloader import DataLoader  # noqa: PLC0415
    from ansible.vars.manager import VariableManager  # noqa: PLC0415

    loader = DataLoader()
    try:
        with _quiet_inventory():
            manager = InventoryManager(loader=loader, sources=[str(inventory)])
            names = [h.name for h in manager.get_hosts(hosts)]
    except AnsibleError as exc:
        raise UsageError(f"{inventory}: {exc.message}") from None
    variables = VariableManager(loader=loader, inventory=manager)
    if not names:
        raise UsageError(f"no hosts of {inventory} match {hosts!r}")
    localhost = manager.localhost or manager.get_host("localhost")
    try:
        hostvars = {
            name: _vars(loader, variables.get_vars(host=manager.get_host(name)), HOST_VARS) for name in names
        }
        site_vars = _vars(loader, variables.get_vars(host=localhost), SITE_VARS)
    except AnsibleError as exc:
        raise UsageError(f"{inventory}: {exc.message}") from None
    try:
        return site_from_hostvars(hostvars, names, site_vars)
    except PlatformInputError as exc:
        raise UsageError(f"{inventory}: {exc}") from None


@contextmanager
def _quiet_inventory() -> Iterator[None]:
    """Ansible's settings for reading an inventory, less the warnings for what matched nothing.

    An inventory without hosts, or none that match, is our own one-line error instead of
    Ansible's warnings and ours (a file that does not parse still gets Ansible's warning).
    """
    import ansible.constants as C  # noqa: PLC0415, N812

    settings = {"INVENTORY_UNPARSED_WARNING": False, "HOST_PATTERN_MISMATCH": "ignore"}
    saved = {key: getattr(C, key) for key in settings}
    for key, value in settings.items():
        setattr(C, key, value)
    try:
        yield
    finally:
        for key, value in saved.items():
            setattr(C, key, value)


def _vars(loader: Any, found: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """The `keys` of `found` that are set, templated, as plain JSON data."""
    from ansible.template import Templar  # noqa: PLC0415

    templar = Templar(loader=loader, variables=found)
    return {key: json.loads(json.dumps(templar.template(found[key]))) for key in keys if key in found}


def render(
    site: Site, output: Path, *, force: bool = False, sections: Sequence[str] = tuple(SECTIONS)
) -> Rendered:
    """Write one YAML file per section (`tenancy.yaml`, `kueue.yaml`) into `output`.

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
