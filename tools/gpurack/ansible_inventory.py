"""An Ansible inventory read as ansible-playbook reads it, without running a play.

ansible's own InventoryManager and VariableManager, so group_vars/ and host_vars/ beside the
inventory count. `gpurack queue -i` takes one variable from here (`gpurack_kubeconfig`), and
`gpurack platform render` its hosts' and the implicit localhost's variables.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gpurack import coerce
from gpurack.errors import UsageError


class Inventory:
    """One inventory, loaded once; each method templates what it returns as plain JSON data.

    Raises (each method): UsageError naming the inventory when ansible cannot read or template it.
    """

    def __init__(self, path: Path) -> None:
        # Imported on use: ansible-core takes most of a second to load and only `-i` needs it.
        from ansible.errors import AnsibleError  # noqa: PLC0415
        from ansible.inventory.manager import InventoryManager  # noqa: PLC0415
        from ansible.parsing.dataloader import DataLoader  # noqa: PLC0415
        from ansible.vars.manager import VariableManager  # noqa: PLC0415

        self.path = path
        self._error = AnsibleError
        self._loader = DataLoader()
        _configured_vault_secrets(self._loader)
        with self._reading(), _quiet_inventory():
            self._manager = InventoryManager(loader=self._loader, sources=[str(path)])
        self._variables = VariableManager(loader=self._loader, inventory=self._manager)

    def hosts(self, pattern: str = "all") -> list[str]:
        """The names of the hosts matching `pattern`, in the inventory's order."""
        with self._reading(), _quiet_inventory():
            return [h.name for h in self._manager.get_hosts(pattern)]

    def host_vars(self, name: str, keys: Sequence[str] | None = None) -> dict[str, Any]:
        """Host `name`'s variables (only `keys` where given, those that are set), templated."""
        return self._templated(self._manager.get_host(name), keys, f"host {name}")

    def localhost_vars(self, keys: Sequence[str] | None = None) -> dict[str, Any]:
        """The implicit localhost's variables (the site-wide ones a controller play sees), templated."""
        localhost = self._manager.localhost or self._manager.get_host("localhost")
        return self._templated(localhost, keys, "group all")

    def variable(self, name: str) -> Any:
        """The value of `name` for the first host (in sorted order) that has it, templated; None if none.

        Raises:
            UsageError: the inventory has no hosts, or the value cannot be templated.
        """
        names = sorted(self.hosts())
        if not names:
            raise UsageError(f"inventory {self.path} has no hosts: ansible could not read {name} from it")
        for host in names:
            found = self.host_vars(host, (name,))
            if name in found:
                return found[name]
        return None

    def _templated(self, host: Any, keys: Sequence[str] | None, owner: str) -> dict[str, Any]:
        """The variables `keys` of `host`, templated, as plain JSON data (`coerce.plain`).

        Raises:
            UsageError: a value JSON cannot hold (an unquoted date, an infinite or huge number),
                naming the inventory, the key and `owner` (the host, or group all).
        """
        from ansible.template import Templar  # noqa: PLC0415

        with self._reading():
            found = self._variables.get_vars(host=host)
            templar = Templar(loader=self._loader, variables=found)
            wanted = list(found) if keys is None else [key for key in keys if key in found]
            values = {key: templar.template(found[key]) for key in wanted}
        try:
            return {key: coerce.plain(value, key) for key, value in values.items()}
        except coerce.NotPlainDataError as error:
            raise UsageError(f"{self.path}: {error.path} of {owner} {error.what}") from None

    @contextmanager
    def _reading(self) -> Iterator[None]:
        try:
            yield
        except self._error as exc:
            if "no inventory was parsed" in str(exc.message).lower():
                raise UsageError(
                    f"{self.path}: ansible could not parse it as an inventory (its warnings above say why: "
                    "a YAML error, a date that is not one, a number of more than 4300 digits)"
                ) from None
            hint = ""
            if "vault" in str(exc.message).lower():
                hint = " (give Ansible the Vault password file: ANSIBLE_VAULT_PASSWORD_FILE=PATH)"
            raise UsageError(f"{self.path}: {exc.message}{hint}") from None


def _configured_vault_secrets(loader: Any) -> None:
    """Let the loader decrypt Vault values with the password files Ansible is configured with
    (`ANSIBLE_VAULT_PASSWORD_FILE`, `vault_password_file` or `vault_identity_list` in
    ansible.cfg), as ansible-playbook would; it never prompts."""
    import ansible.constants as C  # noqa: PLC0415, N812
    from ansible.cli import CLI  # noqa: PLC0415

    files = [C.DEFAULT_VAULT_PASSWORD_FILE] if C.DEFAULT_VAULT_PASSWORD_FILE else []
    if not files and not C.DEFAULT_VAULT_IDENTITY_LIST:
        return
    secrets = CLI.setup_vault_secrets(
        loader, vault_ids=C.DEFAULT_VAULT_IDENTITY_LIST, vault_password_files=files, auto_prompt=False
    )
    loader.set_vault_secrets(secrets)


def inventory_variable(inventory: Path, name: str) -> Any:
    """The value of `name` in `inventory` (see `Inventory.variable`)."""
    return Inventory(inventory).variable(name)


@contextmanager
def _quiet_inventory() -> Iterator[None]:
    """Ansible's settings for reading an inventory, less the warnings for what matched nothing.

    An inventory without hosts, or none that match, is our own one-line error instead of
    Ansible's warnings and ours (a file that does not parse still gets Ansible's warning).
    """
    import ansible.constants as C  # noqa: PLC0415, N812

    settings = {
        "INVENTORY_UNPARSED_WARNING": False,
        "HOST_PATTERN_MISMATCH": "ignore",
        # A file that does not parse at all is our one line, not "has no hosts".
        "INVENTORY_UNPARSED_IS_FAILED": True,
    }
    saved = {key: getattr(C, key) for key in settings}
    for key, value in settings.items():
        setattr(C, key, value)
    try:
        yield
    finally:
        for key, value in saved.items():
            setattr(C, key, value)
