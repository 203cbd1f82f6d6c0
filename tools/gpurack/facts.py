"""Read one node (a capture bundle or this machine) into facts and labels (`gpurack facts`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ansible_collections.gpurack.bootstrap.plugins.module_utils._capture import parse_capture_file
from ansible_collections.gpurack.bootstrap.plugins.module_utils._errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils._labels import LabelError, node_labels
from ansible_collections.gpurack.bootstrap.plugins.module_utils._node_facts import gather_all
from ansible_collections.gpurack.bootstrap.plugins.module_utils._source import (
    CaptureError,
    CaptureSource,
    Source,
    is_capture_dir,
)

from gpurack import capture, local
from gpurack.errors import NotAssessedError, UsageError

Facts = dict[str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a node's facts come from: a capture folder or this machine."""

    kind: Literal["capture", "local"]
    path: Path

    def as_dict(self) -> dict[str, str]:
        """The machine form used in JSON output."""
        return {"kind": self.kind, "path": str(self.path)}


@dataclass(frozen=True, slots=True)
class NodeFacts:
    """One node's facts and the labels derived from them."""

    host: str
    origin: Origin
    facts: Facts
    labels: dict[str, str]

    def as_dict(self) -> dict[str, Any]:
        """The machine form printed by `gpurack facts`."""
        return {"host": self.host, "facts": self.facts, "labels": self.labels}


def read_node(origin: Origin, pool: dict[str, Any]) -> NodeFacts:
    """Gather every fact of the node at `origin` and derive its labels for `pool`.

    Raises:
        UsageError: the capture folder does not exist, or the pool breaks the pool rules.
        NotAssessedError: the folder is not a capture, or its contents are malformed or truncated.
    """
    facts = gather(origin)
    try:
        labels = node_labels(facts, pool)
    except LabelError as exc:
        raise UsageError(f"pool: {exc}") from exc
    return NodeFacts(host=_host(origin), origin=origin, facts=facts, labels=labels)


def gather(origin: Origin) -> Facts:
    """Every `gpurack_*` fact of the node at `origin` (no labels).

    Raises:
        UsageError: the capture folder does not exist.
        NotAssessedError: the folder is not a capture, or its contents are malformed or truncated.
    """
    source = _open(origin)
    try:
        return gather_all(source)
    except (FactsError, CaptureError) as exc:
        message = str(exc) if source.description in str(exc) else f"{source.description}: {exc}"
        raise NotAssessedError(f"could not assess {message}") from exc


def _open(origin: Origin) -> Source:
    """A Source for the origin, checking a capture folder first."""
    if origin.kind == "local":
        return local.live_source(origin.path)
    if not origin.path.exists():
        raise UsageError(f"--from-capture {origin.path}: no such folder")
    if not origin.path.is_dir() or not is_capture_dir(origin.path):
        raise NotAssessedError(f"{origin.path} is not a capture bundle (no command output files in it)")
    return CaptureSource(origin.path)


def _host(origin: Origin) -> str:
    """The node's name: this machine's, else capture.json's, else uname's, else the folder's."""
    if origin.kind == "local":
        return local.hostname()
    manifest = capture.read_manifest(origin.path)
    if manifest and isinstance(manifest.get("host"), str):
        return str(manifest["host"])
    return _uname_nodename(origin.path) or origin.path.name


def _uname_nodename(folder: Path) -> str | None:
    """The node name field of a captured `uname -a`, None when absent."""
    try:
        _, output = parse_capture_file((folder / "uname.txt").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    fields = output.stdout.split()
    return fields[1] if output.rc == 0 and len(fields) > 1 else None
