"""Every module's DOCUMENTATION, EXAMPLES and RETURN are YAML that ansible-doc can read.

ansible-lint only prints an error for a block it cannot parse and goes on, so a broken
block would otherwise reach users as an `ansible-doc` failure.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

MODULES = sorted((Path(__file__).resolve().parents[4] / "plugins" / "modules").glob("*.py"))
BLOCKS = ("DOCUMENTATION", "EXAMPLES", "RETURN")


def _blocks(path: Path) -> dict[str, str]:
    found = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in BLOCKS:
                    found[target.id] = str(node.value.value)
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_module_doc_blocks_parse(path: Path) -> None:
    blocks = _blocks(path)
    assert set(blocks) == set(BLOCKS), f"{path.name} lacks {set(BLOCKS) - set(blocks)}"
    for name, text in blocks.items():
        if name == "EXAMPLES":
            assert isinstance(yaml.safe_load(text), list), f"{path.name} {name}"
        else:
            assert isinstance(yaml.safe_load(text), dict), f"{path.name} {name}"
