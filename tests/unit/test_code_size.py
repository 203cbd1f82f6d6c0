"""No module over 400 lines and no function over 50, unless a `# long: <reason>` comment on the
line above the def (or in the module's first five lines) says why (docs/development.md, "Size")."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TREES = (
    "plugins",
    "tools/gpurack",
    "lab/gpurack_lab",
    "workloads/trainer/gpurack_trainer",
    "workloads/serving/gpurack_serving",
    "workloads/loadgen/gpurack_loadgen",
)
MODULE_MAX, FUNCTION_MAX = 400, 50


def _sources() -> list[Path]:
    return sorted(p for tree in TREES for p in (REPO / tree).rglob("*.py") if "__pycache__" not in p.parts)


def _reason(lines: list[str], index: int) -> bool:
    text = lines[index].strip() if 0 <= index < len(lines) else ""
    return text.startswith("# long: ") and len(text) > len("# long: ") + 5


def _too_long(path: Path) -> list[str]:
    """Each function (and the module) of `path` over its limit without a reason."""
    text = path.read_text()
    lines = text.splitlines()
    found = []
    if len(lines) > MODULE_MAX and not any(_reason(lines, i) for i in range(5)):
        found.append(f"{path.name}: {len(lines)} lines")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = node.end_lineno - node.lineno + 1
            if length > FUNCTION_MAX and not _reason(lines, first - 2):
                found.append(f"{path.name}:{node.lineno} {node.name}: {length} lines")
    return found


def test_no_module_or_function_is_over_its_limit_without_a_reason() -> None:
    assert [f"{p.relative_to(REPO)}: {problem}" for p in _sources() for problem in _too_long(p)] == []


def test_a_long_function_is_found_unless_a_reason_stands_above_it(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(FUNCTION_MAX))
    plain, explained = tmp_path / "plain.py", tmp_path / "explained.py"
    plain.write_text(f"def f():\n{body}\n")
    explained.write_text(f"# long: one literal table, read top to bottom\ndef f():\n{body}\n")
    assert _too_long(plain) == ["plain.py:1 f: 51 lines"]
    assert _too_long(explained) == []


def test_a_long_module_is_found(tmp_path: Path) -> None:
    module = tmp_path / "big.py"
    module.write_text("\n".join(f"x{i} = {i}" for i in range(MODULE_MAX + 1)) + "\n")
    assert _too_long(module) == [f"big.py: {MODULE_MAX + 1} lines"]
