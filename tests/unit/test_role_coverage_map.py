"""docs/molecule.md maps every role to where it is converged twice and verified; the map is complete."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "molecule.md"
SECTION = "## Every role: where it is converged twice and verified"


def _rows() -> dict[str, str]:
    text = DOC.read_text()
    section = text[text.index(SECTION) :].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("role", "---"):
            rows[cells[0]] = cells[2]
    return rows


def test_every_role_has_a_row_and_every_row_a_role() -> None:
    roles = {p.name for p in (REPO / "roles").iterdir() if (p / "tasks").is_dir()}
    assert set(_rows()) == roles


def test_every_file_and_scenario_named_exists() -> None:
    scenarios = {p.name for p in (REPO / "molecule").iterdir() if (p / "molecule.yml").is_file()}
    for role, where in _rows().items():
        for path in re.findall(r"`((?:lab/)?tests/[\w/]+\.py|resources/verify/\w+\.yml)`", where):
            full = REPO / "molecule" / path if path.startswith("resources/") else REPO / path
            assert full.is_file(), (role, path)
        for scenario in re.findall(r"Molecule `(\w+)`(?: and `(\w+)`)?", where):
            assert {s for s in scenario if s} <= scenarios, (role, scenario)
