"""Read one node (a capture bundle or this machine) into facts and labels (`gpurack facts`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeVar

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError, excerpt
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    CaptureError,
    CaptureFormatError,
    CaptureSource,
    Source,
    gather_all,
    is_capture_dir,
    parse_capture_file,
    source_warnings,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels import LabelError, node_labels
from ansible_collections.gpurack.bootstrap.plugins.module_utils.names import is_dns_subdomain

from gpurack import capture, local
from gpurack.errors import NotAssessedError, UsageError

Facts = dict[str, dict[str, Any]]
T = TypeVar("T")


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
    # What reading a capture had to warn about (files with undecodable bytes), one line each.
    warnings: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The machine form printed by `gpurack facts`."""
        return {"host": self.host, "facts": self.facts, "labels": self.labels}


def read_node(origin: Origin, pool: dict[str, Any]) -> NodeFacts:
    """Gather every fact of the node at `origin` and derive its labels for `pool`.

    Raises:
        UsageError: the capture folder does not exist, the pool breaks the pool rules, or this
            machine's host name is no Kubernetes node name.
        NotAssessedError: the folder is not a capture, or its contents are malformed, truncated
            or unsafe (a link out of the bundle, an oversize file, an undecodable node name).
    """
    source = _open(origin)
    if isinstance(source, CaptureSource):
        facts = _assessing(source, lambda: gather_all(source))
        host = _assessing(source, partial(_capture_host, source))
    else:
        host = local.hostname()  # checked before any command runs
        facts = _assessing(source, lambda: gather_all(source))
    try:
        labels = node_labels(facts, pool)
    except LabelError as exc:
        raise UsageError(f"pool: {exc}") from exc
    return NodeFacts(host=host, origin=origin, facts=facts, labels=labels, warnings=source_warnings(source))


def gather(origin: Origin) -> Facts:
    """Every `gpurack_*` fact of the node at `origin` (no labels).

    Raises:
        UsageError: the capture folder does not exist.
        NotAssessedError: the folder is not a capture, or its contents are malformed or truncated.
    """
    source = _open(origin)
    return _assessing(source, lambda: gather_all(source))


def _assessing(source: Source, read: Callable[[], T]) -> T:
    """`read()`, its FactsError or CaptureError turned into NotAssessedError naming the source."""
    try:
        return read()
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


def _capture_host(source: CaptureSource) -> str:
    """The node's name: capture.json's `host`, else uname's node name, else the folder's.

    Raises:
        CaptureError: capture.json has no usable `host`, or the name found has undecodable
            bytes, control characters or spaces, or is no Kubernetes node name (gpurack will
            not record a node under a name it had to guess or Kubernetes would refuse).
    """
    manifest = capture.read_manifest(source.files)
    if manifest is not None:
        host = manifest.get("host")
        if not isinstance(host, str) or not host:
            raise CaptureError(
                f"{source.root / capture.MANIFEST}: `host` must be the node's name (text),"
                f" got {excerpt(repr(host))}; refusing to guess the node's name"
                " (fix the file or capture the node again)"
            )
        return _checked_name(host, source, capture.MANIFEST)
    nodename = _uname_nodename(source)
    if nodename is not None:
        return _checked_name(nodename, source, "uname.txt")
    return _checked_name(source.root.name, source, None)


def _checked_name(name: str, source: CaptureSource, file: str | None) -> str:
    """`name` when it is one printable word and a Kubernetes node name; else CaptureError naming
    the file it came from (`file` None: the bundle folder's own name)."""
    if "\ufffd" in name:
        problem = "has bytes that are not UTF-8"
    elif not name.isprintable() or any(ch.isspace() for ch in name):
        problem = "has control characters or spaces"
    elif not is_dns_subdomain(name):
        problem = (
            "is not a Kubernetes node name (a DNS subdomain: at most 253 lower-case letters, digits,"
            " '-' and '.')"
        )
    else:
        return name
    if file is None:
        raise CaptureError(
            f"{source.root}: the node name {excerpt(name)} (the folder's name: the bundle has no"
            f" {capture.MANIFEST} and no uname.txt) {problem}; rename the folder or capture the node again"
        )
    raise CaptureError(
        f"{source.root / file}: the node name {excerpt(name)} {problem};"
        " refusing to guess the node's name (fix the file or capture the node again)"
    )


def _uname_nodename(source: CaptureSource) -> str | None:
    """The node name field of a captured `uname -a`, None when absent or unframed."""
    text = source.files.read("uname.txt")
    if text is None:
        return None
    try:
        _, output = parse_capture_file(text)
    except CaptureFormatError:
        return None
    fields = output.stdout.split()
    return fields[1] if output.rc == 0 and len(fields) > 1 else None
