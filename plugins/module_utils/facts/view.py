# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Read-only views over fact dicts: consumers read a fact only by a path its parser declares.

Each parser module (`_gpu_facts`, `_pci_facts`, ...) defines the views of what it produces,
each with `FIELDS`, the dotted paths it emits. `view.field("pcie.gen_current")` reads one;
a path outside `FIELDS` is a programming error (`UnknownFieldError`), so a check cannot read a
key that no parser writes. A unit test runs every parser over every capture and asserts
that each declared path is produced. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

V = TypeVar("V", bound="FactView")


class UnknownFieldError(KeyError):
    """A consumer asked a view for a path its parser does not produce."""


class FactView:
    """One fact dict (or one element of a fact's list) read through declared paths."""

    FIELDS: ClassVar[frozenset[str]] = frozenset()
    # The fact name of a top-level view (`gpurack_gpu`); empty for list elements.
    FACT: ClassVar[str] = ""

    def __init__(self, raw: object) -> None:
        self._raw: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}

    @classmethod
    def of(cls: type[V], facts: object) -> V | None:
        """The view of this fact in a node's facts (also under its short name, `gpu`), else None."""
        if not isinstance(facts, Mapping):
            return None
        raw = facts.get(cls.FACT, facts.get(cls.FACT.removeprefix("gpurack_")))
        return cls(raw) if isinstance(raw, Mapping) else None

    def field(self, path: str) -> Any:
        """The value at a declared dotted path; None when the facts lack it.

        Raises:
            UnknownFieldError: `path` is not in FIELDS.
        """
        if path not in self.FIELDS:
            raise UnknownFieldError(
                f"{type(self).__name__} has no field {path!r} (its parser never writes it)"
            )
        node: Any = self._raw
        for part in path.split("."):
            if not isinstance(node, Mapping):
                return None
            node = node.get(part)
        return node

    def items(self, path: str, view: type[V]) -> list[V]:
        """The mappings of the list at `path`, each as `view`."""
        value = self.field(path)
        return [view(x) for x in value if isinstance(x, Mapping)] if isinstance(value, list) else []

    def mapping(self, path: str) -> Mapping[str, Any]:
        """The mapping at `path`, {} when it is absent or not a mapping."""
        value = self.field(path)
        return value if isinstance(value, Mapping) else {}

    @property
    def raw(self) -> Mapping[str, Any]:
        """The underlying dict (to pass on whole, never to index)."""
        return self._raw


def count(value: Any) -> int | None:
    """An int that is not a bool, else None (a counter read from facts)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
