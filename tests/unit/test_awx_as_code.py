"""AWX's objects as code (awx/objects.yml), checked without an AWX: no AWX can run here.

Each job template's playbook exists, and each survey question sets an option of a role that the
playbook runs (its argument specs), with a question type, choices, default and bounds the option
takes; a template's extra variables are read by its playbook. The schedule is a weekly iCal
rule, and ansible-builder turns execution-environment.yml into a build context.
"""

from __future__ import annotations

import copy
import datetime
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[2]
AWX = REPO / "awx"
ROLE_FQCN = re.compile(r"^gpurack\.bootstrap\.(\w+)$")
INCLUDE_KEYS = {f"{p}{k}" for p in ("", "ansible.builtin.") for k in ("include_role", "import_role")}
IMPORT_KEYS = {"import_playbook", "ansible.builtin.import_playbook"}
TASK_LISTS = ("pre_tasks", "tasks", "post_tasks", "handlers", "block", "rescue", "always")
# A value "{{ name }}" is one of objects.yml's own top-level defaults (a site may override them).
VAR_REF = re.compile(r"^\{\{\s*(\w+)\s*\}\}$")
# Ranges the argument specs can only state in words: "(1 to 86400)".
RANGE = re.compile(r"\b(-?\d+) to (-?\d+)\b")
BOOL_STRINGS = {"true", "false", "yes", "no"}
NUMBER_TYPES = {"integer": "int", "float": "float"}
ICAL_DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
# AWX's recurrence: DTSTART (UTC, or a TZID), then a weekly RRULE on one day.
RRULE = re.compile(
    r"^DTSTART(?:;TZID=[\w/+-]+)?:(\d{8})T(\d{6})Z? RRULE:FREQ=WEEKLY;(?:.*;)?BYDAY=([A-Z]{2})"
)


def _resolve(value: Any, top: dict[str, Any]) -> Any:
    if isinstance(value, str) and (ref := VAR_REF.match(value)) and ref[1] in top:
        return _resolve(top[ref[1]], top)
    if isinstance(value, dict):
        return {k: _resolve(v, top) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, top) for v in value]
    return value


def _objects() -> dict[str, Any]:
    top: dict[str, Any] = yaml.safe_load((AWX / "objects.yml").read_text())
    resolved: dict[str, Any] = _resolve(top["gpurack_awx"], top)
    return resolved


OBJECTS = _objects()
TEMPLATES = {t["name"]: t for t in OBJECTS["job_templates"]}


def _task_roles(tasks: list[dict[str, Any]]) -> set[str]:
    names: set[str] = set()
    for task in tasks or []:
        for key in INCLUDE_KEYS & task.keys():
            names.add(task[key]["name"])
        for key in TASK_LISTS:
            names |= _task_roles(task.get(key) or [])
    return names


def _play_roles(playbook: Path) -> set[str]:
    names: set[str] = set()
    for play in yaml.safe_load(playbook.read_text()) or []:
        for key in IMPORT_KEYS & play.keys():
            names |= _play_roles(playbook.parent / play[key])
        for role in play.get("roles") or []:
            names.add(role if isinstance(role, str) else role.get("role", role.get("name")))
        for key in TASK_LISTS:
            names |= _task_roles(play.get(key) or [])
    return names


def playbook_roles(playbook: Path) -> set[str]:
    """The gpurack.bootstrap roles a playbook runs, through import_playbook, roles: and include_role."""
    return {m[1] for name in _play_roles(playbook) if (m := ROLE_FQCN.match(name))}


def role_options(role: str) -> dict[str, dict[str, Any]]:
    """The options of every entry point of a role's argument specs."""
    specs = yaml.safe_load((REPO / "roles" / role / "meta" / "argument_specs.yml").read_text())
    options: dict[str, dict[str, Any]] = {}
    for entry in specs["argument_specs"].values():
        for name, option in (entry.get("options") or {}).items():
            options.setdefault(name, option)
    return options


def _choices(question: dict[str, Any]) -> list[Any]:
    choices = question.get("choices") or []
    return choices.splitlines() if isinstance(choices, str) else list(choices)


def _type_problem(question: dict[str, Any], option: dict[str, Any]) -> str | None:
    """Why the question's answer is not a value of the option's type, or None."""
    kind, otype = question["type"], option.get("type", "str")  # an argument spec's default type is str
    choices, ochoices = _choices(question), option.get("choices")
    if kind in ("text", "textarea", "password"):
        ok = otype == "str" and not ochoices  # an option with choices wants a multiplechoice
    elif kind in NUMBER_TYPES:
        ok = otype == NUMBER_TYPES[kind]
    elif kind == "multiplechoice":
        bools = otype == "bool" and {str(c).lower() for c in choices} <= BOOL_STRINGS
        ok = bools or (otype == "str" and (not ochoices or set(choices) <= set(ochoices)))
        ok = ok and bool(choices)
    elif kind == "multiselect":
        ok = otype == "list" and option.get("elements", "str") == "str" and bool(choices)
        ok = ok and (not ochoices or set(choices) <= set(ochoices))
    else:
        return f"unknown survey type {kind!r}"
    offered = f" with choices {ochoices}" if ochoices else ""
    return None if ok else f"a question of type {kind} cannot set a {otype} option{offered}"


def _default_problem(question: dict[str, Any]) -> str | None:
    if "default" not in question or question["default"] in ("", None):
        return None
    kind, default, choices = question["type"], question["default"], _choices(question)
    if kind == "multiplechoice":
        ok = default in choices
    elif kind == "multiselect":
        ok = set(default.splitlines() if isinstance(default, str) else default) <= set(choices)
    elif kind in NUMBER_TYPES:
        number = (int,) if kind == "integer" else (int, float)
        ok = isinstance(default, number) and not isinstance(default, bool)
        ok = ok and question.get("min", default) <= default <= question.get("max", default)
    else:
        length = len(default) if isinstance(default, str) else -1
        ok = question.get("min", 0) <= length <= question.get("max", length)
    return None if ok else f"default {default!r} is not an answer the question takes"


def _bounds_problem(question: dict[str, Any], option: dict[str, Any]) -> str | None:
    description = option.get("description") or ""
    stated = RANGE.search(" ".join(description) if isinstance(description, list) else str(description))
    if question["type"] not in NUMBER_TYPES or stated is None:
        return None
    low, high = int(stated[1]), int(stated[2])
    qmin, qmax = question.get("min", low - 1), question.get("max", high + 1)
    ok = low <= qmin <= qmax <= high
    return None if ok else f"min/max {qmin}..{qmax} outside the role's {low} to {high}"


def question_problems(question: dict[str, Any], options: dict[str, dict[str, Any]]) -> list[str]:
    """What is wrong with one survey question, given the options of the playbook's roles."""
    variable = question["variable"]
    if variable not in options:
        return [f"{variable}: no role the playbook runs has this option"]
    found = (_type_problem(question, options[variable]), _default_problem(question))
    return [f"{variable}: {p}" for p in (*found, _bounds_problem(question, options[variable])) if p]


def _template_options(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    playbook = REPO / template["playbook"]
    assert playbook.is_file(), f"{template['name']}: {template['playbook']} does not exist"
    options: dict[str, dict[str, Any]] = {}
    for role in sorted(playbook_roles(playbook)):
        options |= role_options(role)
    return options


def test_job_templates_run_the_day_1_and_day_2_playbooks() -> None:
    assert {n: t["playbook"] for n, t in TEMPLATES.items()} == {
        "gpurack site": "playbooks/site.yml",
        "gpurack maintenance": "playbooks/maintenance.yml",
        "gpurack return to service": "playbooks/maintenance.yml",
        "gpurack validate": "playbooks/validate.yml",
        "gpurack accept": "playbooks/accept.yml",
    }


@pytest.mark.parametrize("name", sorted(n for n, t in TEMPLATES.items() if t.get("extra_vars")))
def test_extra_vars_are_read_by_the_playbook(name: str) -> None:
    text = (REPO / TEMPLATES[name]["playbook"]).read_text()
    for variable in TEMPLATES[name]["extra_vars"]:
        assert re.search(rf"\b{variable}\b", text), f"{name}: {variable} is not read by its playbook"


def test_playbook_roles_follows_imports_and_include_role() -> None:
    roles = playbook_roles(REPO / "playbooks" / "site.yml")
    assert {"switch_fabric", "preflight", "nvidia_driver", "node_labels", "kueue", "validation"} <= roles
    assert playbook_roles(REPO / "playbooks" / "accept.yml") == {"acceptance"}


@pytest.mark.parametrize("name", sorted(n for n, t in TEMPLATES.items() if "survey_spec" in t))
def test_survey_questions_set_options_of_the_playbooks_roles(name: str) -> None:
    template = TEMPLATES[name]
    options = _template_options(template)
    spec = template["survey_spec"]["spec"]
    assert spec, f"{name} has no survey"
    variables = [q["variable"] for q in spec]
    assert len(variables) == len(set(variables)), variables
    assert [p for q in spec for p in question_problems(q, options)] == []


# The check itself must catch what goes wrong in a survey (checked on role specs alone).
@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"variable": "validation_update_nodes"}, "no role the playbook runs has this option"),
        ({"type": "text", "choices": None}, "cannot set a bool option"),
        ({"default": "maybe"}, "is not an answer"),
        ({"variable": "node_maintenance_drain_timeout", "type": "integer", "choices": None, "default": 600,
          "min": 0, "max": 600}, "outside the role's 1 to 86400"),
        ({"variable": "node_maintenance_pools", "type": "multiplechoice"}, "cannot set a list option"),
    ],
)  # fmt: skip
def test_question_problems_catches_a_broken_question(change: dict[str, Any], expected: str) -> None:
    options = role_options("node_maintenance") | role_options("validation")
    question: dict[str, Any] = {
        "variable": "validation_update_node",
        "type": "multiplechoice",
        "default": "false",
    }
    question |= {"choices": ["true", "false"], **change}
    problems = question_problems(question, options)
    assert any(expected in p for p in problems), problems


def test_question_problems_passes_a_good_question() -> None:
    question = copy.deepcopy(TEMPLATES["gpurack validate"]["survey_spec"]["spec"][0])
    assert question_problems(question, role_options("validation")) == []


def test_the_schedule_is_a_weekly_validation() -> None:
    (schedule,) = OBJECTS["schedules"]
    rule = RRULE.match(schedule["rrule"])
    assert rule, schedule["rrule"]
    start = datetime.datetime.strptime(rule[1] + rule[2], "%Y%m%d%H%M%S")
    assert ICAL_DAYS[start.weekday()] == rule[3], "DTSTART is not on the BYDAY day"
    template = TEMPLATES[schedule["unified_job_template"]]
    assert template["playbook"] == "playbooks/validate.yml"
    answers = {q["variable"]: q for q in template["survey_spec"]["spec"]}
    for variable, value in schedule.get("extra_data", {}).items():
        assert variable in answers, f"{variable} is not a question of the template's survey"
        assert _default_problem(answers[variable] | {"default": value}) is None, (variable, value)


def _ee_collections() -> list[str]:
    return [c["name"] for c in yaml.safe_load((AWX / "ee" / "requirements.yml").read_text())["collections"]]


def test_ee_collections_install_this_versions_tarball() -> None:
    version = yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]
    assert f"collections/gpurack-bootstrap-{version}.tar.gz" in _ee_collections()


def test_ee_collections_cover_every_fqcn_the_roles_and_playbooks_call() -> None:
    used: set[str] = set()
    for path in [*REPO.glob("roles/*/*/*.yml"), *REPO.glob("playbooks/*.yml")]:
        used |= set(re.findall(r"^\s*-?\s*([a-z_]+\.[a-z_]+)\.[a-z_0-9]+:\s*$", path.read_text(), re.M))
    assert used - {"ansible.builtin", "gpurack.bootstrap"} <= set(_ee_collections())


def test_ee_python_requirements_match_pyproject() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    floors = {(r := Requirement(d)).name.lower(): r.specifier for d in project}
    lines = (AWX / "ee" / "requirements.txt").read_text().splitlines()
    for req in (Requirement(line.split("#")[0]) for line in lines if line.split("#")[0].strip()):
        assert floors.get(req.name.lower()) == req.specifier, req


def test_ee_base_image_names_no_registry_host() -> None:
    image = yaml.safe_load((REPO / "execution-environment.yml").read_text())["images"]["base_image"]["name"]
    first = image.split("/")[0]
    assert "/" not in image or not ("." in first or ":" in first or first == "localhost"), image


def test_ansible_builder_create_writes_a_containerfile_with_the_python_requirements(tmp_path: Path) -> None:
    builder = Path(sys.executable).with_name("ansible-builder")
    if not builder.exists():
        pytest.skip("ansible-builder is not in the venv (pip install -e '.[dev]')")
    subprocess.run(
        [str(builder), "create", "-f", "execution-environment.yml", "-c", str(tmp_path),
         "--output-filename", "Containerfile"],
        cwd=REPO, check=True, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    containerfile = (tmp_path / "Containerfile").read_text()
    assert "--user-pip=requirements.txt" in containerfile
    assert "ansible-core>=2.19,<2.20" in containerfile
    ours = (AWX / "ee" / "requirements.txt").read_text()
    assert (tmp_path / "_build" / "requirements.txt").read_text() == ours
    assert "kubernetes>=31" in ours
