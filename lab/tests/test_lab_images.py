"""Loading an image archive into lab nodes: the archive's image name, what is refused, and
that a node already holding the image is skipped (docker stood in for by a recorder)."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
from gpurack.errors import UsageError
from gpurack_lab import docker, images
from gpurack_lab.state import LabHost, LabState

MKIMAGE = Path(__file__).resolve().parents[1] / "k8s-build" / "mkimage.py"
REF = "registry.gpurack.lab/tiny:1"
STATE = LabState(
    image="gpurack-node:abc",
    network="lab-net",
    subnet="172.30.42.0/24",
    key="/k",
    hosts=(
        LabHost("lab-cp1", "control_plane", "172.30.42.10", "cpu-only", "lab_cpu_only"),
        LabHost("lab-w1", "worker", "172.30.42.11", "h200x1", "lab_h200x1"),
        LabHost("lab-w2", "worker", "172.30.42.12", "hgx-h100x8-ib", "lab_hgx_h100x8_ib"),
    ),
)


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    """A real archive of the project's image writer, one small file in it."""
    payload = tmp_path / "hello"
    payload.write_text("hello\n")
    out = tmp_path / "tiny.tar"
    subprocess.run(
        [sys.executable, str(MKIMAGE), "--ref", REF, "--out", str(out), "--file", f"{payload}:/hello:0644"],
        check=True,
        capture_output=True,
    )
    return out


def test_the_archive_names_its_image(archive: Path) -> None:
    assert images.image_ref(archive) == REF


def test_a_file_that_is_no_archive_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "x.tar"
    bad.write_text("not a tar")
    with pytest.raises(UsageError, match="not an OCI image archive"):
        images.image_ref(bad)


def _digest(archive: Path) -> str:
    with tarfile.open(archive) as tar:
        member = tar.extractfile("index.json")
        assert member is not None
        return str(json.loads(member.read())["manifests"][0]["digest"])


def test_every_worker_gets_it_once(archive: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, ...]] = []
    digest = _digest(archive)
    kind = "application/vnd.oci.image.manifest.v1+json"
    held = {
        "lab-w1": f"REF TYPE DIGEST SIZE\n{REF} {kind} {digest} 1.0 KiB linux/amd64 -\n",
        # The same name, another build: imported again.
        "lab-w2": f"REF TYPE DIGEST SIZE\n{REF} {kind} sha256:{'0' * 64} 1.0 KiB linux/amd64 -\n",
    }

    def exec_in(name: str, argv: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        calls.append((name, *argv[:4]))
        return subprocess.CompletedProcess(argv, 0, held[name] if "ls" in argv else "", "")

    def copy_into(name: str, src: Path, dest: str, **_: Any) -> None:
        calls.append((name, "cp", str(src), dest))

    monkeypatch.setattr(docker, "exec_in", exec_in)
    monkeypatch.setattr(docker, "copy_into", copy_into)
    loaded = images.load(STATE, archive)
    assert [(x.host, x.imported) for x in loaded] == [("lab-w1", False), ("lab-w2", True)]
    assert ("lab-w2", "cp", str(archive), images.STAGING) in calls
    assert ("lab-w2", "ctr", "-n", "k8s.io", "images") in calls
    assert not any(c[0] == "lab-w1" and c[1] == "cp" for c in calls)
    assert not any(c[0] == "lab-cp1" for c in calls)


def test_an_unknown_host_is_refused_before_any_copy(archive: Path) -> None:
    with pytest.raises(UsageError, match="no lab host lab-w9"):
        images.load(STATE, archive, ["lab-w9"])
