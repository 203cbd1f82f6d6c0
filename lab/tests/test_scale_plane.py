"""The scale plane of the 1,000-node benchmark: its PKI, its refusal without the build, and one
real start on loopback when the offline build (with kwok) is on this machine."""

from __future__ import annotations

import socket
import ssl
import urllib.request
from pathlib import Path

import pytest
import yaml
from gpurack_lab import scale_plane as plane_mod
from gpurack_lab.lab_kubernetes import build_dir
from gpurack_lab.pki import write_pki


def test_write_pki_names_the_server_and_leaves_out_the_kubelet(tmp_path: Path) -> None:
    write_pki(tmp_path, server="https://127.0.0.1:40001")
    config = yaml.safe_load((tmp_path / "admin.conf").read_text())
    assert config["clusters"][0]["cluster"] == {
        "server": "https://127.0.0.1:40001",
        "certificate-authority": "ca.crt",
    }
    assert not (tmp_path / "kubelet.conf").exists()
    # The admin certificate chains to the CA the API server trusts.
    context = ssl.create_default_context(cafile=str(tmp_path / "ca.crt"))
    context.load_cert_chain(str(tmp_path / "admin.crt"), str(tmp_path / "admin.key"))


def test_require_binaries_names_the_build_commands(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    with pytest.raises(plane_mod.ScalePlaneError, match=r"lacks etcd, kwok .*build.sh --only kwok"):
        plane_mod.require_binaries(tmp_path / "bin", ("etcd", "kwok"))


def test_free_port_is_free_on_loopback() -> None:
    port = plane_mod.free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


@pytest.mark.skipif(
    not (build_dir() / "bin" / "kwok").is_file(), reason="no kwok in the offline build (build.sh --only kwok)"
)
def test_scale_plane_starts_on_loopback_and_stops() -> None:
    with plane_mod.scale_plane() as plane:
        assert plane.server.startswith("https://127.0.0.1:")
        with urllib.request.urlopen(f"{plane.server}/readyz", context=plane_mod.tls_context(plane)) as answer:
            assert answer.status == 200
        assert plane_mod.ready_nodes(plane) == 0
        folder = plane.folder
    assert not folder.exists()
