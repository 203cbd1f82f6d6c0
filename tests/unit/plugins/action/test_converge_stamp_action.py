"""converge_stamp's action plugin: a survey answers a later check only for the same inputs,
the same probe and an unchanged live state; anything else goes to the host."""

from __future__ import annotations

from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.action.converge_stamp import held_by_survey
from ansible_collections.gpurack.bootstrap.plugins.module_utils.converge import digest

ARGS: dict[str, Any] = {
    "name": "container_runtime_nvidia",
    "role": "container_runtime",
    "inputs": {"vars": {"container_runtime_nvidia_enabled": True}, "role": "3f1a"},
    "probe": {"paths": ["/etc/containerd/config.toml"], "services": ["containerd"], "mounts": []},
}
ENTRY: dict[str, Any] = {
    "inputs": digest(ARGS["inputs"]),
    "probe": {"paths": ["/etc/containerd/config.toml"], "services": ["containerd"]},
    "holds": True,
    "facts": {"container_runtime_restarted": False},
}


def test_a_holding_entry_answers_as_the_module_would() -> None:
    held = held_by_survey(ARGS, ENTRY)
    assert held == {
        "changed": False,
        "holds": True,
        "reasons": [],
        "stamp": "/var/lib/gpurack/converged/container_runtime_nvidia.json",
        "ansible_facts": {"container_runtime_restarted": False, "gpurack_converged_container_runtime": True},
    }
    assert held_by_survey({**ARGS, "stamp_dir": "/srv/stamps/"}, ENTRY)["stamp"] == (  # type: ignore[index]
        "/srv/stamps/container_runtime_nvidia.json"
    )


@pytest.mark.parametrize(
    ("args", "entry"),
    [
        (ARGS, None),  # no stamp of that name was surveyed
        (ARGS, {**ENTRY, "holds": False}),  # its live state changed
        ({**ARGS, "inputs": {"vars": {"container_runtime_nvidia_enabled": False}}}, ENTRY),
        ({**ARGS, "probe": {"paths": ["/etc/containerd/config.toml"]}}, ENTRY),
        ({**ARGS, "probe": {"files": ["/x"]}}, ENTRY),  # refused by the module, with its message
        (ARGS, "not an entry"),
    ],
    ids=["no-entry", "live-change", "other-inputs", "other-probe", "bad-probe", "garbage"],
)
def test_anything_else_goes_to_the_host(args: dict[str, Any], entry: Any) -> None:
    assert held_by_survey(args, entry) is None


class _Play:
    def __init__(self, uuid: str) -> None:
        self._uuid = uuid


def _action(
    args: dict[str, Any], play: str, answers: list[dict[str, Any]], calls: list[dict[str, Any]], **task: Any
) -> Any:
    """The action plugin on a stand-in task whose module runs return `answers` in turn."""
    from unittest.mock import MagicMock

    from ansible_collections.gpurack.bootstrap.plugins.action.converge_stamp import ActionModule

    stand_in = MagicMock(
        args=args, async_val=0, check_mode=False, **{"delegate_to": None, "run_once": False, **task}
    )
    stand_in.get_play.return_value = _Play(play)
    connection = MagicMock()
    connection._shell.tmpdir = "/tmp/stand-in"
    action = ActionModule(stand_in, connection, MagicMock(), MagicMock(), MagicMock(), MagicMock())

    def execute_module(module_name: str, module_args: dict[str, Any], task_vars: Any) -> dict[str, Any]:
        calls.append(module_args)
        return dict(answers.pop(0))

    action._execute_module = execute_module
    return action


def _vars(survey: dict[str, Any] | None) -> dict[str, Any]:
    facts = {} if survey is None else {"gpurack_converge_survey": survey}
    roles = ["gpurack.bootstrap.os_tuning", "gpurack.bootstrap.container_runtime"]
    return {"ansible_facts": facts, "inventory_hostname": "gpu01", "ansible_play_role_names": roles}


HOLDING = {"changed": False, "holds": True, "reasons": [], "ansible_facts": {"x": True}}


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """The host_changes callback enabled, with the counts a test sets."""
    from ansible_collections.gpurack.bootstrap.plugins.callback import host_changes

    counts: dict[str, int] = {}
    monkeypatch.setattr(host_changes, "_ENABLED", [True])
    monkeypatch.setattr(host_changes, "_COUNTS", counts)
    return counts


def test_a_check_surveys_and_a_later_one_is_answered_from_it(counted: dict[str, int]) -> None:
    calls: list[dict[str, Any]] = []
    first = _action(ARGS, "play-1", [{**HOLDING, "survey": {ARGS["name"]: ENTRY}}], calls).run(
        task_vars=_vars(None)
    )
    assert calls == [{**ARGS, "survey": ["os_tuning", "container_runtime"]}] and "survey" not in first
    survey = first["ansible_facts"]["gpurack_converge_survey"]
    scope = {"play": "play-1", "stamp_dir": "/var/lib/gpurack/converged", "changes": 0}
    assert survey == {"scope": scope, "stamps": {ARGS["name"]: ENTRY}}

    second = _action(ARGS, "play-1", [], calls).run(task_vars=_vars(survey))
    assert (second["holds"], second["checked_by"], len(calls)) == (True, "survey", 1)  # no module run


@pytest.mark.parametrize(
    ("change", "task"),
    [
        ("another play", {}),
        ("a changed result", {}),
        ("another stamp folder", {}),
        ("delegated", {"delegate_to": "localhost"}),
        ("run once", {"run_once": True}),
    ],
)
def test_the_host_is_read_again_after_anything_that_may_have_touched_it(
    counted: dict[str, int], change: str, task: dict[str, Any]
) -> None:
    calls: list[dict[str, Any]] = []
    scope = {"play": "play-1", "stamp_dir": "/var/lib/gpurack/converged", "changes": 0}
    survey = {"scope": scope, "stamps": {ARGS["name"]: ENTRY}}
    args, play = dict(ARGS), "play-1"
    if change == "another play":
        play = "play-2"
    elif change == "a changed result":
        counted["gpu01"] = 1
    elif change == "another stamp folder":
        args["stamp_dir"] = "/srv/stamps"
    answer = _action(args, play, [{**HOLDING, "survey": {}}], calls, **task).run(task_vars=_vars(survey))
    assert answer["checked_by"] == "host" and len(calls) == 1
    surveyed = "survey" in calls[0]
    assert surveyed is (not task)  # a delegated or run_once check neither reads nor keeps a survey
    assert (answer["ansible_facts"]["gpurack_converge_survey"] != {}) is surveyed


def test_without_the_callback_no_survey_is_read_or_used(monkeypatch: pytest.MonkeyPatch) -> None:
    from ansible_collections.gpurack.bootstrap.plugins.callback import host_changes

    monkeypatch.setattr(host_changes, "_ENABLED", [])
    calls: list[dict[str, Any]] = []
    scope = {"play": "play-1", "stamp_dir": "/var/lib/gpurack/converged", "changes": 0}
    survey = {"scope": scope, "stamps": {ARGS["name"]: ENTRY}}
    answer = _action(ARGS, "play-1", [HOLDING], calls).run(task_vars=_vars(survey))
    assert answer["checked_by"] == "host" and calls == [ARGS]


def test_recording_a_stamp_drops_the_survey(counted: dict[str, int]) -> None:
    calls: list[dict[str, Any]] = []
    scope = {"play": "play-1", "stamp_dir": "/var/lib/gpurack/converged", "changes": 0}
    survey = {"scope": scope, "stamps": {ARGS["name"]: ENTRY}}
    recorded = _action({**ARGS, "state": "recorded"}, "play-1", [{"changed": False, "holds": False}], calls)
    assert recorded.run(task_vars=_vars(survey))["ansible_facts"]["gpurack_converge_survey"] == {}
    assert calls == [{**ARGS, "state": "recorded"}]
