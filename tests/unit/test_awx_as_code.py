"""AWX's objects as code (awx/objects.yml), checked without an AWX: no AWX can run here.

Each job template's playbook exists, and each survey question sets an option of a role that the
playbook runs (its argument specs; roles a role includes count), with a question type, choices,
default and bounds the option takes; a template's extra variables are read by its playbook. Each
schedule is a weekly iCal rule whose answers the template's survey takes, and ansible-builder
turns execution-environment.yml into a build context.
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
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[2]
AWX = REPO / "awx"
ROLE_FQCN = re.compile(r"^gpurack\.bootstrap\.(\w+)$")
INCLUDE_KEYS = {f"{p}{k}" for p in ("", "ansible.builtin.") for k in ("include_role", "import_role")}
TASK_FILE_KEYS = {f"{p}{k}" for p in ("", "ansible.builtin.") for k in ("include_tasks", "import_tasks")}
IMPORT_KEYS = {"import_playbook", "ansible.builtin.import_playbook"}
TASK_LISTS = ("pre_tasks", "tasks", "post_tasks", "handlers", "block", "rescue", "always")
# The one value objects.yml leaves to the site (configure.yml fails without it).
SITE_VARS = {"gpurack_awx_scm_url": "https://git.example.invalid/infra/gpurack.git"}
TEMPLATED = re.compile(r"\{\{.*?\}\}")
# Ranges the argument specs can only state in words: "(1 to 86400)".
RANGE = re.compile(r"\b(-?\d+) to (-?\d+)\b")
BOOL_STRINGS = {"true", "false", "yes", "no"}
NUMBER_TYPES = {"integer": "int", "float": "float"}
ICAL_DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
# AWX's recurrence: DTSTART (UTC, or a TZID), then a weekly RRULE on one day.
RRULE = re.compile(
    r"^DTSTART(?:;TZID=[\w/+-]+)?:(\d{8})T(\d{6})Z? RRULE:FREQ=WEEKLY;(?:.*;)?BYDAY=([A-Z]{2})"
)


def _objects() -> dict[str, Any]:
    """gpurack_awx as configure.yml sees it: rendered by ansible-core with objects.yml's defaults.

    Not plain Jinja: ansible-core keeps a backslash escape in a Jinja string literal as written.
    """
    loader = DataLoader()
    top = loader.load_from_file(str(AWX / "objects.yml"), trusted_as_template=True)
    rendered: dict[str, Any] = Templar(loader=loader, variables=top | SITE_VARS).template(top["gpurack_awx"])
    return rendered


OBJECTS = _objects()
TEMPLATES = {t["name"]: t for t in OBJECTS["job_templates"]}


# A role as a task list runs it: its name as written and its entry point (tasks_from).
RoleCall = tuple[str, str]


def _task_files(folder: Path, name: str) -> list[Path]:
    """The task files an include_tasks of `name` may load: a templated name may be any match."""
    return sorted(folder.glob(TEMPLATED.sub("*", name))) if "{{" in name else [folder / name]


def _task_roles(
    tasks: list[dict[str, Any]], folder: Path | None = None, seen: set[Path] | None = None
) -> set[RoleCall]:
    """The roles a task list runs; with `folder` (a role's tasks/), through its include_tasks too
    (`seen`: the files already read; a templated name may match the file that includes it)."""
    calls: set[RoleCall] = set()
    seen = set() if seen is None else seen
    for task in tasks or []:
        for key in INCLUDE_KEYS & task.keys():
            calls.add((task[key]["name"], Path(str(task[key].get("tasks_from", "main"))).stem))
        for key in TASK_FILE_KEYS & task.keys():
            name = task[key] if isinstance(task[key], str) else task[key]["file"]
            for path in set(_task_files(folder, name) if folder else []) - seen:
                seen.add(path)
                calls |= _task_roles(yaml.safe_load(path.read_text()), folder, seen)
        for key in TASK_LISTS:
            calls |= _task_roles(task.get(key) or [], folder, seen)
    return calls


def _play_roles(playbook: Path) -> set[RoleCall]:
    calls: set[RoleCall] = set()
    for play in yaml.safe_load(playbook.read_text()) or []:
        for key in IMPORT_KEYS & play.keys():
            calls |= _play_roles(playbook.parent / play[key])
        for role in play.get("roles") or []:
            calls.add((role if isinstance(role, str) else role.get("role", role.get("name")), "main"))
        for key in TASK_LISTS:
            calls |= _task_roles(play.get(key) or [])
    return calls


def role_calls(role: str, entry: str = "main") -> set[RoleCall]:
    """The roles one entry point of a role runs: its meta dependencies and its include_role, in
    the entry's task file and the task files that file includes."""
    folder = REPO / "roles" / role / "tasks"
    meta = yaml.safe_load((REPO / "roles" / role / "meta" / "main.yml").read_text()) or {}
    deps = meta.get("dependencies") or []
    calls = {(d if isinstance(d, str) else d.get("role", d.get("name")), "main") for d in deps}
    return calls | _task_roles(yaml.safe_load((folder / f"{entry}.yml").read_text()), folder)


def playbook_roles(playbook: Path) -> set[str]:
    """The gpurack.bootstrap roles a playbook runs, through import_playbook, roles: and include_role,
    and the roles those roles run in turn."""
    waiting, done = list(_play_roles(playbook)), set[RoleCall]()
    while waiting:
        name, entry = waiting.pop()
        if (m := ROLE_FQCN.match(name)) and (m[1], entry) not in done:
            done.add((m[1], entry))
            waiting.extend(role_calls(m[1], entry))
    return {role for role, _ in done}


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
    elif kind == "multiselect":  # AWX 24.6.1 takes only a string: a choice a line
        ok = isinstance(default, str) and set(default.splitlines()) <= set(choices)
    elif kind in NUMBER_TYPES:
        number = (int,) if kind == "integer" else (int, float)
        ok = isinstance(default, number) and not isinstance(default, bool)
        ok = ok and question.get("min", default) <= default <= question.get("max", default)
    else:
        length = len(default) if isinstance(default, str) else -1
        ok = question.get("min", 0) <= length <= question.get("max", length)
    return None if ok else f"default {default!r} is not an answer the question takes"


def answer_problem(question: dict[str, Any], answer: Any) -> str | None:
    """Why AWX would refuse `answer` to the question at launch, as its survey validation does."""
    kind, choices = question["type"], _choices(question)
    if kind == "multiselect":
        ok = isinstance(answer, list) and set(answer) <= set(choices)
    elif kind == "multiplechoice":
        ok = isinstance(answer, str) and answer in choices
    elif kind in NUMBER_TYPES:
        number = (int,) if kind == "integer" else (int, float)
        ok = isinstance(answer, number) and not isinstance(answer, bool)
        ok = ok and question.get("min", answer) <= answer <= question.get("max", answer)
    else:
        length = len(answer) if isinstance(answer, str) else -1
        ok = question.get("min", 0) <= length <= question.get("max", length)
    return None if ok else f"{question['variable']}: {answer!r} is not an answer the question takes"


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
        "gpurack patch": "playbooks/patch.yml",
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


def test_playbook_roles_follows_include_role_inside_a_roles_task_files() -> None:
    # patch.yml names node_update; node_update's task files include nvidia_driver.
    assert {"node_update", "nvidia_driver", "node_maintenance", "validation"} <= playbook_roles(
        REPO / "playbooks" / "patch.yml"
    )
    assert ("gpurack.bootstrap.nvidia_driver", "main") in role_calls("node_update", "update")
    assert ("gpurack.bootstrap.preflight", "main") in role_calls("validation")


def test_playbook_roles_does_not_take_roles_a_playbook_never_reaches() -> None:
    # maintenance.yml runs node_maintenance alone: no driver role, so no driver option.
    assert playbook_roles(REPO / "playbooks" / "maintenance.yml") == {"node_maintenance"}
    question = {"variable": "nvidia_driver_branch", "type": "text", "default": "580"}
    problems = question_problems(question, _template_options(TEMPLATES["gpurack maintenance"]))
    assert problems == ["nvidia_driver_branch: no role the playbook runs has this option"]


def test_patch_survey_asks_what_patch_night_decides() -> None:
    spec = {q["variable"]: q for q in TEMPLATES["gpurack patch"]["survey_spec"]["spec"]}
    assert set(spec) == {
        "node_maintenance_pools",
        "node_maintenance_serial",
        "node_maintenance_max_fail_percentage",
        "node_update_allow_reboot",
        "node_maintenance_drain_timeout",
    }
    assert spec["node_maintenance_pools"]["type"] == "multiselect"
    assert TEMPLATES["gpurack patch"]["ask_limit_on_launch"] is True


def test_patch_pools_are_the_sites_pools() -> None:
    pools = {
        yaml.safe_load(path.read_text())["gpurack_pool"]["name"]
        for path in (REPO / "inventory" / "example" / "group_vars").glob("*/pool.yml")
    }
    (question,) = [q for q in TEMPLATES["gpurack patch"]["survey_spec"]["spec"] if q["type"] == "multiselect"]
    assert set(_choices(question)) == pools
    assert set(question["default"].splitlines()) == pools  # every pool unless the operator unticks one


# AWX 24.6.1 passes a blank optional answer as "" or null, and an extra var beats the role's
# default and the inventory (nvidia_driver_branch "" would name packages nvidia-utils-).
@pytest.mark.parametrize("name", sorted(n for n, t in TEMPLATES.items() if "survey_spec" in t))
def test_survey_questions_are_all_required(name: str) -> None:
    spec = TEMPLATES[name]["survey_spec"]["spec"]
    assert [q["variable"] for q in spec if not q.get("required")] == []


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
        # AWX 24.6.1 takes a multiselect's default as one string, a choice a line
        ({"variable": "node_maintenance_pools", "type": "multiselect", "choices": ["a"], "default": ["a"]},
         "is not an answer"),
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


SCHEDULES = {s["name"]: s for s in OBJECTS["schedules"]}


def schedule_problems(schedule: dict[str, Any]) -> list[str]:
    """What AWX would refuse in a schedule's answers: a variable its template's survey does not ask,
    an answer the question does not take, or a required question left out."""
    template = TEMPLATES[schedule["unified_job_template"]]
    questions = {q["variable"]: q for q in template.get("survey_spec", {}).get("spec", [])}
    answers = schedule.get("extra_data") or {}
    problems = [f"{v}: not a question of {template['name']}'s survey" for v in answers if v not in questions]
    problems += [p for v, a in answers.items() if v in questions and (p := answer_problem(questions[v], a))]
    missing = [v for v, q in questions.items() if q["required"] and v not in answers]
    return problems + [f"{v}: required, not answered" for v in missing]


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedules_are_weekly_and_answer_their_templates_survey(name: str) -> None:
    schedule = SCHEDULES[name]
    rule = RRULE.match(schedule["rrule"])
    assert rule, schedule["rrule"]
    start = datetime.datetime.strptime(rule[1] + rule[2], "%Y%m%d%H%M%S")
    assert ICAL_DAYS[start.weekday()] == rule[3], "DTSTART is not on the BYDAY day"
    assert schedule_problems(schedule) == []


def test_the_schedules_validate_weekly_and_patch_in_a_window() -> None:
    assert {n: s["unified_job_template"] for n, s in SCHEDULES.items()} == {
        "gpurack weekly validation": "gpurack validate",
        "gpurack weekly patch window": "gpurack patch",
    }
    window = SCHEDULES["gpurack weekly patch window"]
    assert window["extra_data"]["node_maintenance_serial"] == "1"
    assert window["extra_data"]["node_update_allow_reboot"] == "true"
    # The window starts after the validation sweep, not with it.
    assert window["rrule"] != SCHEDULES["gpurack weekly validation"]["rrule"]


# The check itself must catch what AWX would refuse in a schedule's answers.
@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"node_maintenance_serial": 1}, "is not an answer"),  # a text answer is a string
        ({"node_update_allow_reboot": "yes"}, "is not an answer"),
        ({"node_maintenance_max_fail_percentage": 101}, "is not an answer"),
        ({"node_maintenance_pools": "h100-train-a"}, "is not an answer"),  # a multiselect takes a list
        ({"node_maintenance_pools": ["h100-train-b"]}, "is not an answer"),
        ({"nvidia_driver_version": "580.95.05"}, "not a question of gpurack patch's survey"),
        ({"node_maintenance_drain_timeout": None}, "required, not answered"),
    ],
)  # fmt: skip
def test_schedule_problems_catches_a_bad_answer(change: dict[str, Any], expected: str) -> None:
    schedule = copy.deepcopy(SCHEDULES["gpurack weekly patch window"])
    schedule["extra_data"] |= change
    schedule["extra_data"] = {k: v for k, v in schedule["extra_data"].items() if v is not None}
    problems = schedule_problems(schedule)
    assert any(expected in p for p in problems), problems


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
