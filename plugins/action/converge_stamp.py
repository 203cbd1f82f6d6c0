# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Check a converge stamp from the host's survey where one holds (docs: plugins/modules/converge_stamp.py).

A GPU node's prepare play checks five stamps, one module run on the node each. Each check that
runs the module also has it survey the host's other stamps of the play's roles (one package
query and one systemd query for all), kept as a host fact. A later check in the same play whose
inputs digest and probe equal what its stamp recorded, and whose live state the survey found
unchanged, is answered here, in the controller, but only while nothing has happened to the host
since the survey was read: no result of the host changed it, failed or found it unreachable
(counted by the host_changes callback; without that callback no survey is reused), and no stamp
was recorded. A delegated or run_once check always runs the module.
"""

from __future__ import annotations

import json
from typing import Any

from ansible.module_utils.common.json import Direction, get_module_encoder
from ansible.plugins.action import ActionBase
from ansible_collections.gpurack.bootstrap.plugins.callback.host_changes import changes_on
from ansible_collections.gpurack.bootstrap.plugins.module_utils.converge import Probe, digest

SURVEY_FACT = "gpurack_converge_survey"
DEFAULT_STAMP_DIR = "/var/lib/gpurack/converged"
_MODULE = "gpurack.bootstrap.converge_stamp"


def _as_sent(inputs: Any) -> Any:
    """The inputs as the module receives them (dict keys as strings, dates as the wire writes them)."""
    encoder = get_module_encoder("legacy", Direction.CONTROLLER_TO_MODULE)
    return json.loads(json.dumps(inputs, cls=encoder))


def held_by_survey(args: dict[str, Any], entry: Any) -> dict[str, Any] | None:
    """The module's answer for a stamp the survey found holding on these inputs and this probe;
    None when the survey cannot say (no entry, another digest or probe, a live change, bad args)."""
    if not isinstance(entry, dict) or entry.get("holds") is not True:
        return None
    try:
        probe = Probe.from_mapping(args.get("probe") or {}).to_mapping()
        inputs = digest(_as_sent(args.get("inputs", {})))
    except (AttributeError, TypeError, ValueError):
        return None  # the module refuses it with its message
    if entry.get("inputs") != inputs or entry.get("probe") != probe:
        return None
    converged = f"gpurack_converged_{args.get('role') or args['name']}"
    stamp = f"{str(args.get('stamp_dir') or DEFAULT_STAMP_DIR).rstrip('/')}/{args['name']}.json"
    facts = {**(entry.get("facts") or {}), converged: True}
    return {"changed": False, "holds": True, "reasons": [], "stamp": stamp, "ansible_facts": facts}


class ActionModule(ActionBase):  # type: ignore[misc]
    """The converge_stamp module, with a host's stamps read once while nothing touches it."""

    _supports_check_mode = True

    def _scope(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any] | None:
        """What a survey must have been read under to answer this check: the play, the stamp
        folder and the host's change count; None where no survey may be used."""
        if self._task.delegate_to or self._task.run_once or args.get("state", "checked") != "checked":
            return None
        try:
            play = getattr(self._task.get_play(), "_uuid", None)
        except AttributeError:  # a task outside a play
            return None
        changes = changes_on(str(task_vars.get("inventory_hostname", "")))
        if not play or changes is None:
            return None
        return {
            "play": str(play),
            "stamp_dir": str(args.get("stamp_dir") or DEFAULT_STAMP_DIR),
            "changes": changes,
        }

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        args = dict(self._task.args)
        scope = self._scope(args, task_vars)
        survey = (task_vars.get("ansible_facts") or {}).get(SURVEY_FACT) or {}
        if (
            scope is not None
            and isinstance(survey, dict)
            and survey.get("scope") == scope
            and args.get("name")
        ):
            held = held_by_survey(args, (survey.get("stamps") or {}).get(args["name"]))
            if held is not None:
                result.update(held, checked_by="survey")
                return result
        roles = [str(name).rsplit(".", 1)[-1] for name in task_vars.get("ansible_play_role_names") or []]
        module_args = {**args, "survey": roles} if scope is not None and roles else args
        outcome = self._execute_module(module_name=_MODULE, module_args=module_args, task_vars=task_vars)
        taken = outcome.pop("survey", None)
        if not outcome.get("failed"):
            kept = {"scope": scope, "stamps": taken} if scope is not None and isinstance(taken, dict) else {}
            outcome.setdefault("ansible_facts", {})[SURVEY_FACT] = kept
        result.update(outcome, checked_by="host")
        return result
