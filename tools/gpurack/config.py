"""Operator YAML inputs: pool expectations (`gpurack_expect`) and pool settings (`gpurack_pool`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import validate_expect
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels import pool_errors

from gpurack.errors import UsageError

EXPECT_KEY = "gpurack_expect"
# A pool's expectations are a few hundred bytes, a group_vars file a few KiB: 1 MiB is generous,
# and it keeps a wrong path (a log, /dev/zero) from being read whole.
MAX_FILE_BYTES = 1024 * 1024
_UTF16_32_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
POOL_KEY = "gpurack_pool"
DEFAULT_POOL: dict[str, Any] = {"name": "unassigned", "workload": "batch", "sharing": "full-gpu"}


def load_expect(path: Path | None) -> dict[str, Any]:
    """Return the validated expectations of a YAML file ({} without one); a group_vars file works too.

    Raises:
        UsageError: unreadable file, bad YAML, or expectations that fail validate_expect.
    """
    if path is None:
        return {}
    expect = _unwrap(_load_mapping(path), EXPECT_KEY)
    errors = validate_expect(expect, path=EXPECT_KEY)
    if errors:
        raise UsageError(f"{path}: {len(errors)} invalid expectation(s)", details=tuple(errors))
    return expect


def load_pool(path: Path | None) -> dict[str, Any]:
    """Return the pool settings of a YAML file, over the defaults (unassigned, batch, full-gpu).

    The pool rules are the playbooks' (pool_errors): an unknown key (a misspelt `wrkload`)
    is refused, never ignored in favour of the default.

    Raises:
        UsageError: unreadable file, bad YAML, or a pool that breaks the pool rules.
    """
    if path is None:
        return dict(DEFAULT_POOL)
    pool = {**DEFAULT_POOL, **_unwrap(_load_mapping(path), POOL_KEY)}
    if errors := pool_errors(pool):
        raise UsageError(f"--pool {path}: {'; '.join(errors)}")
    return pool


def _load_mapping(path: Path) -> dict[str, Any]:
    """Parse a YAML file that must hold a mapping (an empty file is an empty mapping)."""
    text = read_text(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: not valid YAML: {_yaml_problem(exc)}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"{path}: expected a YAML mapping at the top level, found {type(data).__name__}")
    return data


def read_text(path: Path) -> str:
    """The UTF-8 text of an operator's file, read at most MAX_FILE_BYTES + 1 bytes.

    Raises:
        UsageError: unreadable, over MAX_FILE_BYTES, UTF-16/32, binary (NUL bytes) or not UTF-8.
    """
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if len(data) > MAX_FILE_BYTES:
        raise UsageError(f"{path}: over {MAX_FILE_BYTES // 1024} KiB, too large for a YAML settings file")
    if data.startswith(_UTF16_32_BOMS):
        raise UsageError(f"{path}: is UTF-16 or UTF-32 text; save it as UTF-8")
    if b"\x00" in data:
        raise UsageError(f"{path}: holds NUL bytes (a binary file, or UTF-16 without a BOM), not UTF-8 YAML")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = f"0x{data[exc.start]:02x} at offset {exc.start}"
        raise UsageError(f"{path}: is not UTF-8 text (byte {byte}); save it as UTF-8") from None


def _unwrap(data: dict[str, Any], key: str) -> dict[str, Any]:
    """The value under `key` when the file is an inventory vars file holding it, else the file itself."""
    if key not in data:
        return data
    inner = data[key]
    if not isinstance(inner, dict):
        raise UsageError(f"{key}: expected a mapping, found {type(inner).__name__}")
    return inner


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """One line from a YAML error: the problem and where."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        return f"{exc.problem} (line {mark.line + 1}, column {mark.column + 1})"
    return str(exc).splitlines()[0]
