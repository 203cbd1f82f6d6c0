"""Run a collection module's main() as Ansible would and return its JSON result."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest
from ansible.module_utils import basic
from ansible.module_utils.common.text.converters import to_bytes

_PKG = "ansible_collections.gpurack.bootstrap.plugins.modules"


def run_module(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str, /, **args: Any
) -> dict[str, Any]:
    """Call plugins/modules/<name>.py's main() with `args` (plus `_ansible_*` keys) and parse its output."""
    payload = {
        "ANSIBLE_MODULE_ARGS": {"_ansible_remote_tmp": "/tmp", "_ansible_keep_remote_files": False, **args}
    }
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", to_bytes(json.dumps(payload)))
    # ansible-core 2.19 also needs the serialization profile the controller would have sent.
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy")
    module = importlib.import_module(f"{_PKG}.{name}")
    with pytest.raises(SystemExit):
        module.main()
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result
