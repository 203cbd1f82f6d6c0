"""Load an OCI image archive (lab/k8s-build/mkimage.py's, e.g. the acceptance trainer's) into
lab nodes' containerd, without a registry: `docker cp` into the node, then
`ctr -n k8s.io images import` there, pinned so the kubelet's image GC keeps it.

A node that already holds the archive's image (its name with the same manifest digest) is
skipped, so a second load is a no-op; a rebuilt image under the same name is imported again.
"""

from __future__ import annotations

import json
import tarfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpurack.errors import UsageError

from gpurack_lab import docker
from gpurack_lab.state import LabState

# A multi-GB archive: copying and unpacking it take minutes on a loaded 2-core machine.
IMPORT_TIMEOUT_S = 900
STAGING = "/var/tmp/gpurack-image.tar"


@dataclass(frozen=True, slots=True)
class Loaded:
    """What one node did with the archive."""

    host: str
    ref: str
    imported: bool  # False: the node had it already


def image_ref(archive: Path) -> str:
    """The image name an archive carries (its OCI index's `io.containerd.image.name`).

    Raises:
        UsageError: not a readable OCI archive, or it names no image.
    """
    return _named_manifest(archive)[0]


def _named_manifest(archive: Path) -> tuple[str, str]:
    """The archive's image name and its manifest's digest (what `ctr images ls` lists)."""
    try:
        with tarfile.open(archive) as tar:
            member = tar.extractfile("index.json")
            index = json.loads(member.read()) if member else {}
    except (OSError, tarfile.TarError, KeyError, ValueError) as exc:
        raise UsageError(f"{archive}: not an OCI image archive ({exc})") from None
    for manifest in index.get("manifests") or []:
        name = (manifest.get("annotations") or {}).get("io.containerd.image.name")
        if name:
            return str(name), str(manifest.get("digest", ""))
    raise UsageError(f"{archive}: its index.json names no image (io.containerd.image.name)")


def load(
    state: LabState, archive: Path, hosts: Sequence[str] = (), step: Callable[[str], None] | None = None
) -> list[Loaded]:
    """Import `archive` into the containerd of `hosts` (default: every worker).

    Raises:
        UsageError: an unknown host, or a bad archive.
        DockerError: a copy or an import failed.
    """
    ref, digest = _named_manifest(archive)
    targets = list(hosts) or [h.name for h in state.workers]
    unknown = [h for h in targets if state.host(h) is None]
    if unknown:
        raise UsageError(
            f"no lab host {', '.join(unknown)} (hosts: {', '.join(h.name for h in state.hosts)})"
        )
    loaded = []
    for host in targets:
        if step:
            step(f"load {ref} on {host}")
        listed = docker.exec_in(host, ["ctr", "-n", "k8s.io", "images", "ls"]).stdout.splitlines()
        # REF TYPE DIGEST SIZE ... a line
        present = {fields[0]: fields[2] for fields in (line.split() for line in listed) if len(fields) > 2}
        if present.get(ref) == digest:
            loaded.append(Loaded(host, ref, imported=False))
            continue
        docker.copy_into(host, archive, STAGING, timeout=IMPORT_TIMEOUT_S)
        try:
            docker.exec_in(
                host,
                ["ctr", "-n", "k8s.io", "images", "import", "--local",
                 "--label", "io.cri-containerd.pinned=pinned", STAGING],
                timeout=IMPORT_TIMEOUT_S,
            )  # fmt: skip
        finally:
            docker.exec_in(host, ["rm", "-f", STAGING], check=False)
        loaded.append(Loaded(host, ref, imported=True))
    return loaded
