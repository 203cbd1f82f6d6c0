"""Read one variable of an Ansible inventory as its hosts see it, without running a play.

`gpurack queue -i INVENTORY` takes `gpurack_kubeconfig` from here: ansible's own
InventoryManager and VariableManager, so group_vars/ and host_vars/ beside the inventory count.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpurack.errors import UsageError


def inventory_variable(inventory: Path, name: str) -> Any:
    """The value of `name` for the first host (in sorted order) that has it, templated; None if none.

    Raises:
        UsageError: the inventory cannot be parsed or has no hosts, or the value cannot be templated.
    """
    # Imported here: loading ansible costs most of a second, and only `-i` needs it.
    from ansible.errors import AnsibleError  # noqa: PLC0415
    from ansible.inventory.manager import InventoryManager  # noqa: PLC0415
    from ansible.parsing.dataloader import DataLoader  # noqa: PLC0415
    from ansible.template import Templar  # noqa: PLC0415
    from ansible.vars.manager import VariableManager  # noqa: PLC0415

    loader = DataLoader()
    try:
        manager = InventoryManager(loader=loader, sources=[str(inventory)])
        variables = VariableManager(loader=loader, inventory=manager)
        hosts = manager.get_hosts()
        if not hosts:
            raise UsageError(f"inventory {inventory} has no hosts: ansible could not read {name} from it")
        for host in sorted(hosts, key=lambda h: h.name):
            hostvars = variables.get_vars(host=host)
            if name in hostvars:
                return Templar(loader=loader, variables=hostvars).template(hostvars[name])
    except AnsibleError as exc:
        raise UsageError(f"cannot read {name} from inventory {inventory}: {exc}") from exc
    return None
