"""The plugin_preload callback: with it, a forked worker finds gpurack's filter and action
plugins already imported (inherited from the controller); without it, each worker imports them.

Each case is a real ansible-playbook run whose one task reports, from inside its worker, which
of the collection's plugin modules were in sys.modules before the task's own templating."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ansible.plugins import loader
from ansible_collections.gpurack.bootstrap.plugins.callback.plugin_preload import CallbackModule, _names
from playbook_runs import run_local_playbook

ROOT = Path(__file__).resolve().parents[4]
FILTERS = "ansible_collections.gpurack.bootstrap.plugins.filter."
ACTIONS = "ansible_collections.gpurack.bootstrap.plugins.action."

# A lookup plugin beside the playbook runs in the worker, before the task templates anything else.
PROBE = """
import sys
from ansible.plugins.lookup import LookupBase

class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        ours = "ansible_collections.gpurack.bootstrap.plugins."
        return [sorted(m for m in sys.modules if m.startswith(ours))]
"""
PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Report what the worker had imported
      ansible.builtin.debug:
        msg: "{{ lookup('loaded', wantlist=True) | to_json }}"
"""


def _imported_in_worker(tmp_path: Path, callbacks: str) -> list[str]:
    (tmp_path / "lookup_plugins").mkdir()
    (tmp_path / "lookup_plugins" / "loaded.py").write_text(PROBE)
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    report = run_local_playbook(
        tmp_path, callbacks, {"ANSIBLE_LOOKUP_PLUGINS": str(tmp_path / "lookup_plugins")}
    )
    task = report["plays"][0]["tasks"][0]
    found: list[str] = json.loads(task["hosts"]["localhost"]["msg"])[0]
    return found


def test_with_the_callback_a_worker_inherits_every_filter_and_action_module(tmp_path: Path) -> None:
    imported = _imported_in_worker(tmp_path, "gpurack.bootstrap.plugin_preload")
    filters = {m.removeprefix(FILTERS) for m in imported if m.startswith(FILTERS)}
    assert filters >= {"labels", "platform", "acceptance", "fabric", "converge"}, imported
    assert f"{ACTIONS}k8s_apply" in imported


def test_without_it_the_worker_starts_with_none_of_them(tmp_path: Path) -> None:
    assert _imported_in_worker(tmp_path, "ansible.posix.timer") == []


def test_the_names_it_loads_are_the_collections_own() -> None:
    assert "pool_errors" in _names("filter", ".yml") and "node_labels" in _names("filter", ".yml")
    assert _names("action", ".py") == ["converge_stamp", "k8s_apply"]


def test_a_plugin_that_cannot_be_loaded_is_left_to_its_task(monkeypatch: pytest.MonkeyPatch) -> None:
    tried: list[str] = []

    def first_one_broken(fqcn: str, *_args: Any, **_kwargs: Any) -> None:
        tried.append(fqcn)
        if len(tried) == 1:
            raise ImportError("broken plugin")

    monkeypatch.setattr(loader.filter_loader, "get", first_one_broken)
    monkeypatch.setattr(loader.action_loader, "get", first_one_broken)
    CallbackModule().v2_playbook_on_start(None)  # no exception: the task that uses it reports it
    names = [*_names("filter", ".yml"), *_names("action", ".py")]
    assert tried == [f"gpurack.bootstrap.{name}" for name in names]  # the rest were still loaded
