"""role_digest and role_options: a role's version and its declared variables, read on the controller."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.filter.converge import role_digest, role_options

REPO = Path(__file__).resolve().parents[4]


def test_the_digest_follows_the_roles_files(tmp_path: Path) -> None:
    role = tmp_path / "os_tuning"
    shutil.copytree(REPO / "roles" / "os_tuning", role)
    first = role_digest(str(role))
    assert role_digest(str(role)) == first
    sysctl = role / "templates" / "etc" / "sysctl.d" / "90-gpurack.conf.j2"
    sysctl.write_text(sysctl.read_text() + "# a new line\n")
    assert role_digest(str(role)) != first
    with pytest.raises(AnsibleFilterError, match="role's folder"):
        role_digest(str(tmp_path / "missing"))


def test_the_options_are_the_argument_specs() -> None:
    options = role_options(str(REPO / "roles" / "os_tuning"))
    assert "os_tuning_sysctls" in options and "os_tuning_converge_stamps" in options
    assert options == sorted(options)
    assert "os_tuning_reboot_pending" not in options  # a fact the role sets, not an input
    with pytest.raises(AnsibleFilterError, match="cannot read 'nothing'"):
        role_options(str(REPO / "roles" / "os_tuning"), "nothing")
