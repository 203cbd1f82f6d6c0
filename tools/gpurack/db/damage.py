"""Stored values that cannot be what their column says: one place decides, and names the row.

A row written by hand, by another tool or by a disk that lost a page can hold text that is not
JSON, a time that is not a time, a number where a name belongs, a verdict no check gives or
labels of the wrong shape. The column types read such a value as `Damaged` instead of raising in
the middle of a query (gpurack.db.models); every reader passes each row it turns into a record
through `check_entity` or `check_values`, which raise `DamagedRowError`: the table, the row's
primary key and the field, exit 2. A reader of many rows keeps the rows it could read
(`DamagedRowsError.readable`) so the command can still show them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Any, Generic, TypeVar

from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import VERDICTS

from gpurack.errors import NotAssessedError

_MAX_SHOWN = 40
T = TypeVar("T")


class Damaged:
    """A stored value its column type could not decode (`raw` as the database gave it)."""

    __slots__ = ("raw", "why")

    def __init__(self, raw: object, why: str) -> None:
        self.raw = raw
        self.why = why


class DamagedRowError(NotAssessedError):
    """A row that holds a value its field cannot hold (exit 2)."""

    def __init__(self, table: str, row: object, field: str, problem: str) -> None:
        super().__init__(f"inventory database is damaged: table {table}, row {row}, field {field}: {problem}")
        self.table, self.row, self.field = table, row, field


class DamagedRowsError(NotAssessedError, Generic[T]):
    """Some rows of a listing are damaged: `readable` holds the others, `first` the first damage."""

    def __init__(self, first: DamagedRowError, count: int, readable: Sequence[T]) -> None:
        more = f" (and {count - 1} more damaged row(s))" if count > 1 else ""
        super().__init__(first.message + more)
        self.first = first
        self.readable = tuple(readable)


def shown(value: object) -> str:
    """`value` as a problem quotes it: its repr, cut to a readable length."""
    text = repr(value.raw if isinstance(value, Damaged) else value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _is_labels(value: object) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


# Rules beyond the column's own type: (table, field) -> (test, what the field holds).
_VERDICT = (lambda v: v in VERDICTS, f"one of {', '.join(VERDICTS)}")
RULES: dict[tuple[str, str], tuple[Callable[[object], bool], str]] = {
    ("snapshots", "labels"): (_is_labels, "a mapping of label names to text"),
    ("snapshots", "facts"): (lambda v: isinstance(v, Mapping), "a mapping of facts"),
    ("snapshots", "verdict"): _VERDICT,
    ("check_results", "verdict"): _VERDICT,
    ("acceptance_runs", "verdict"): _VERDICT,
    ("acceptance_steps", "verdict"): _VERDICT,
    ("acceptance_steps", "result"): (lambda v: isinstance(v, Mapping), "a mapping (one check's result)"),
}


def problem(table: str, field: str, value: object, python_type: type | None, nullable: bool) -> str | None:
    """What is wrong with `value` in `table`.`field`, or None when it is what the field holds."""
    if isinstance(value, Damaged):
        return f"cannot be read ({shown(value)}: {value.why[:80]})"
    if value is None:
        return None if nullable else "is empty (NULL) where a value belongs"
    if type(value) is python_type and (table, field) not in RULES and python_type is not float:
        return None  # the common case, decided at once
    if python_type is not None and not _of_type(value, python_type):
        return f"is {shown(value)}, not {_TYPE_WORDS.get(python_type, python_type.__name__)}"
    rule = RULES.get((table, field))
    if rule is not None and not rule[0](value):
        return f"is {shown(value)}, not {rule[1]}"
    return None


_TYPE_WORDS = {str: "text", int: "a whole number", float: "a number", bool: "true or false"}


def _of_type(value: object, python_type: type) -> bool:
    if python_type is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)
    if python_type is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if python_type is bool:
        return isinstance(value, bool) or value in (0, 1)
    return isinstance(value, python_type)


def column_type(column: Any) -> type | None:
    """The Python type a column holds, or None where any JSON value goes."""
    try:
        found = column.type.python_type
    except NotImplementedError:
        return None
    return found if found in _TYPE_WORDS or found.__name__ == "datetime" else None


def check_values(table: Any, row: object, fields: Mapping[str, object]) -> None:
    """Check each value of `fields` (by column name) against its column of `table` (row `row`).

    Raises:
        DamagedRowError: the first value that its column cannot hold.
    """
    for key, value in fields.items():
        python_type, nullable = _column_rule(table, key)
        found = problem(table.name, key, value, python_type, nullable)
        if found is not None:
            raise DamagedRowError(table.name, row, key, found)


@cache
def _column_rule(table: Any, key: str) -> tuple[type | None, bool]:
    """The type and nullability of `table`.`key` (asked once: every row of a read asks again)."""
    column = table.c[key]
    return column_type(column), bool(column.nullable)


def check_entity(entity: Any) -> Any:
    """`entity` (a model instance) once every column of it holds what the column says.

    Raises:
        DamagedRowError: the first damaged field.
    """
    table = entity.__table__
    check_values(table, entity.id, {c.key: getattr(entity, c.key) for c in table.columns})
    return entity


def readable(rows: Iterable[Any], convert: Callable[[Any], T]) -> list[T]:
    """`convert` of each row, in order, when none is damaged.

    Raises:
        DamagedRowsError: a row is damaged; it holds the others, converted.
    """
    out: list[T] = []
    damage: list[DamagedRowError] = []
    for row in rows:
        try:
            out.append(convert(row))
        except DamagedRowError as error:
            damage.append(error)
    if damage:
        raise DamagedRowsError(damage[0], len(damage), out)
    return out
